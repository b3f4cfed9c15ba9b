/**
 * The proxy ledger (seed 004): record hashing, the writer, verification of tampered ledgers,
 * the `--lore` re-check, the capture-fragment export, and the `loretrace ledger` command.
 */
import { createHash } from 'node:crypto';
import { cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GENESIS_HASH, LedgerWriter, hashLedgerRecord, parseLedger, verifyLedger } from '../src/receipts/ledger.js';
import { openingSession } from '../src/receipts/lock.js';
import { readArtifacts } from '../src/coverage/index.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import { indexVault } from '../src/indexer/build.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import { validateDocument } from '../src/contracts/validate.js';
import { main } from '../src/cli/main.js';
import { FIXTURE_VAULT, R, fixtureSession, tempDir } from './helpers/proxy.js';
import { REPO } from './helpers/shared.js';
import type { LedgerSessionInfo } from '../src/receipts/ledger-record.js';
import { ledgerIdOf } from '../src/receipts/ledger-record.js';

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
  const code = await main(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: tmp.dir, env: { ...process.env, LORETRACE_INDEX_DIR: join(tmp.dir, 'index-cache') } });
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
  it('chains v4 records from the genesis hash, derives ledger_id and record_id, writes each line in its RFC 8785 form, and never opens an existing file', async () => {
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
    expect(a).toMatchObject({ schema_version: 'loretrace.ledger.v4', ledger_id: id, seq: 0, record_id: `${id}:0`, canonical_form: 'RFC8785', prev_hash: GENESIS_HASH });
    expect(b).toMatchObject({ ledger_id: id, seq: 1, record_id: `${id}:1`, prev_hash: a.record_hash });
    expect(Object.keys(b)).toEqual(['schema_version', 'ledger_id', 'seq', 'record_id', 'kind', 'occurred_on', 'actor', 'canonical_form', 'totals', 'prev_hash', 'record_hash']);
    expect(lines(path).map((l) => JSON.parse(l).record_hash)).toEqual([a.record_hash, b.record_hash]);
    // On disk each line is the record's one byte form: RFC 8785 (keys sorted, no white space), then a line feed.
    expect(readFileSync(path, 'utf8')).toBe(`${canonicalize(a)}\n${canonicalize(b)}\n`);
    expect(lines(path)[1]).toBe(`{"actor":{"id":"loretrace-proxy","kind":"system"},"canonical_form":"RFC8785","kind":"SESSION_CLOSED","ledger_id":"${id}","occurred_on":"2025-01-01T00:00:01.000Z","prev_hash":"${a.record_hash}","record_hash":"${b.record_hash}","record_id":"${id}:1","schema_version":"loretrace.ledger.v4","seq":1,"totals":{"tool_calls":0}}`);
    expect(() => LedgerWriter.create(path)).toThrow(expect.objectContaining({ code: 'ledger_exists' }));
  });
});

describe('verifyLedger', () => {
  it('accepts a closed session ledger and reports its head, totals and packet', async () => {
    const path = await sessionLedger();
    const r = await verifyLedger(readFileSync(path, 'utf8'), { file: 'session.jsonl' });
    expect(r).toMatchObject({
      valid: true, records: 10, verified_through_seq: 9, first_bad_seq: null, closed: true, schema_version: 'loretrace.ledger.v4',
      packet_id: 'proxy-fixture.brinefall-berths.dock_warden_ilse.packet.research.v0',
      totals: { tool_calls: 4, ok: 3, refused: 1, unanswered: 0 }, findings: [],
    });
    expect(r.head_hash).toBe(JSON.parse(lines(path)[9]!).record_hash);
    // Each call is its TOOL_CALL (the request) and then its outcome, which names the call.
    const records = lines(path).map((l) => JSON.parse(l));
    expect(records.map((x) => [x.kind, x.tool ?? null, x.call_record_id ?? null])).toEqual([
      ['SESSION_OPENED', null, null],
      ['TOOL_CALL', 'lore_read', null], ['TOOL_RESULT', 'lore_read', records[1].record_id],
      ['TOOL_CALL', 'lore_read', null], ['TOOL_REFUSED', 'lore_read', records[3].record_id],
      ['TOOL_CALL', 'lore_follow', null], ['TOOL_RESULT', 'lore_follow', records[5].record_id],
      ['TOOL_CALL', 'lore_read', null], ['TOOL_RESULT', 'lore_read', records[7].record_id],
      ['SESSION_CLOSED', null, null],
    ]);
    expect(Object.keys(records[1])).toEqual(['actor', 'arguments', 'canonical_form', 'kind', 'ledger_id', 'occurred_on', 'prev_hash', 'record_hash', 'record_id', 'schema_version', 'seq', 'tool', 'transport']);
    expect(Object.keys(records[2])).toEqual(['actor', 'call_record_id', 'canonical_form', 'kind', 'ledger_id', 'occurred_on', 'outcome', 'payload_hash', 'prev_hash', 'record_hash', 'record_id', 'schema_version', 'seq', 'tool', 'transport']);
    expect(records[1]).toMatchObject({ actor: { kind: 'agent', id: 'dock_warden_ilse' }, transport: 'direct', arguments: { ref: `${R.territories}#Brinefall Shelf` }, occurred_on: '2025-01-01T00:00:01.000Z' });
    expect(records[2].occurred_on).toBe('2025-01-01T00:00:02.000Z');
  });

  it('names the first bad seq of an edited record', async () => {
    const path = await sessionLedger();
    const ls = lines(path);
    // The record of a read served lines 5-8; claim it served 5-9.
    expect(ls[2]).toContain('"line_end":8,');
    ls[2] = ls[2]!.replace('"line_end":8,', '"line_end":9,');
    const r = await verifyLedger(ls.join('\n') + '\n', { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, first_bad_seq: 2, verified_through_seq: 1, records: 2 });
    expect(r.findings[0]).toMatchObject({ code: 'ledger_record_hash_mismatch', line: 3, path: 'x.jsonl', pointer: '/record_hash' });
  });

  it('catches an edited record whose own hash was recomputed at the next record', async () => {
    const path = await sessionLedger();
    const ls = lines(path);
    const rec = JSON.parse(ls[4]!);
    expect(rec.kind).toBe('TOOL_REFUSED');
    rec.outcome.code = 'not_reached';
    rec.record_hash = hashLedgerRecord(rec.prev_hash, rec);
    ls[4] = canonicalize(rec)!;
    const r = await verifyLedger(ls.join('\n') + '\n');
    expect(r.first_bad_seq).toBe(5);
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
        return [...ls.slice(0, 2), canonicalize(forged)!, ...ls.slice(2)];
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
      return [canonicalize(rec)!, ...ls.slice(1)].join('\n') + '\n';
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
    expect(ls[1]!).toMatch(/^\{"actor":\{"id":"dock_warden_ilse","kind":"agent"\},"arguments":.*,"seq":1,"tool":"lore_read","transport":"direct"\}$/);
    const top = [ls[0]!, ls[1]!.replace('"seq":1,', '"seq":5,"seq":1,'), ...ls.slice(2)];
    const column = ls[1]!.indexOf('"seq":1,') + '"seq":5,'.length + 1;
    const r = await verifyLedger(top.join('\n') + '\n', { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, first_bad_seq: 1, verified_through_seq: 0, records: 1 });
    expect(r.findings).toEqual([{
      code: 'ledger_bad_record', severity: 'error', path: 'x.jsonl', line: 2, pointer: '/seq',
      message: `line 2 (seq 1): /seq is a duplicate key (column ${column}); JSON.parse keeps the last value and the record_hash covers only that, so a reader of the line may see a value that was never hashed; expected each key once`,
    }]);
    // Nested: a second "ref" inside the arguments of the TOOL_CALL seq 3 (the hash still matches the last-wins parse).
    const ref = JSON.parse(ls[3]!).arguments.ref as string;
    const nested = [...ls.slice(0, 3), ls[3]!.replace(`"arguments":{"ref":${JSON.stringify(ref)}`, `"arguments":{"ref":"FixtureLore:Home.md","ref":${JSON.stringify(ref)}`), ...ls.slice(4)];
    expect(nested[3]).not.toBe(ls[3]);
    const n = await verifyLedger(nested.join('\n') + '\n');
    expect(n.findings.map((f) => [f.code, f.line, f.pointer])).toEqual([['ledger_bad_record', 4, '/arguments/ref']]);
    expect(n.first_bad_seq).toBe(3);
    await expect(exportLedger(nested.join('\n') + '\n', { file: 'x.jsonl' })).rejects.toMatchObject({ code: 'ledger_invalid', details: { line: 4, data: { code: 'ledger_bad_record' } } });
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

  it('says a file that is not a ledger is not one, naming the file and line 1 and what line 1 must be (ledger_not_a_ledger)', async () => {
    const expected = 'expected a SESSION_OPENED record of schema loretrace.ledger.v4 (or loretrace.ledger.v3, loretrace.ledger.v2, loretrace.ledger.v1): {"actor":…,"kind":"SESSION_OPENED",…,"schema_version":"loretrace.ledger.v4","seq":0,…}';
    const cases: [string, string, string][] = [
      ['{"not":"a ledger"}\n{"x":1}\n', 'ledger_not_a_ledger', `notes.jsonl is not a loretrace ledger: line 1 is an object without schema_version (keys "not"); ${expected}`],
      ['{"schema_version":"ghostlight.responder_packet.v0","packet_id":"p"}\n', 'ledger_not_a_ledger', `notes.jsonl is not a loretrace ledger: line 1 is an object of schema_version "ghostlight.responder_packet.v0"; ${expected}`],
      ['[1,2]\n', 'ledger_not_a_ledger', `notes.jsonl is not a loretrace ledger: line 1 is a JSON array; ${expected}`],
      ['hello world\n', 'ledger_bad_json', `line 1 (seq 0) is not JSON; expected one ledger record per line, the first a ${expected.slice('expected a '.length)}`],
    ];
    for (const [text, code, message] of cases) {
      const r = await verifyLedger(text, { file: 'notes.jsonl' });
      expect(r).toMatchObject({ valid: false, records: 0, first_bad_seq: 0 });
      expect(r.findings[0]).toMatchObject({ code, severity: 'error', path: 'notes.jsonl', line: 1, message });
    }
    writeFileSync(join(tmp.dir, 'notes.jsonl'), cases[0]![0]);
    const out = await cli(['ledger', 'verify', 'notes.jsonl']);
    expect(out.code).toBe(1);
    expect(out.stdout).toContain(`\nnotes.jsonl:1: [ledger_not_a_ledger] ${cases[0]![2]}\n`);
  });

  it('refuses a record nested 5,000 levels deep as ledger_bad_record naming its line, seq and pointer (no stack overflow)', async () => {
    const ls = readFileSync(await sessionLedger(), 'utf8').split('\n');
    const deep = ls[1]!.replace('"arguments":{', `"arguments":{"deep":${'['.repeat(5000)}${']'.repeat(5000)},`);
    expect(deep).not.toBe(ls[1]);
    const text = [ls[0], deep, ...ls.slice(2)].join('\n');
    const r = await verifyLedger(text, { file: 'deep.jsonl' });
    expect(r).toMatchObject({ valid: false, records: 1, first_bad_seq: 1 });
    expect(r.findings[0]).toMatchObject({
      code: 'ledger_bad_record', path: 'deep.jsonl', line: 2, pointer: `/arguments/deep${'/0'.repeat(254)}`,
      message: `line 2 (seq 1) nests deeper than 256 arrays and objects at column ${deep.indexOf('[') + 1 + 254} (pointer /arguments/deep/0/0/0/0/…/0/0); expected a record of schemas/ledger-record.schema.json`,
    });
    writeFileSync(join(tmp.dir, 'deep.jsonl'), text);
    const out = await cli(['ledger', 'verify', 'deep.jsonl']);
    expect(out.code).toBe(1);
    expect(out.stdout).toContain(`\ndeep.jsonl:2: [ledger_bad_record] ${r.findings[0]!.message}\n`);
    await expect(exportLedger(text, { file: 'deep.jsonl' })).rejects.toMatchObject({ code: 'ledger_invalid', details: { line: 2, data: { code: 'ledger_bad_record' } } });
  });

  it('refuses an integer beyond 2^53 - 1 and a __proto__ key in a record as ledger_bad_record, never rounding or dropping them', async () => {
    const ls = readFileSync(await sessionLedger(), 'utf8').split('\n');
    const big = ls[1]!.replace('"arguments":{', '"arguments":{"limit":9007199254740993,');
    const r = await verifyLedger([ls[0], big, ...ls.slice(2)].join('\n'), { file: 'big.jsonl' });
    expect(r.findings[0]).toMatchObject({
      code: 'ledger_bad_record', line: 2, pointer: '/arguments/limit',
      message: `line 2 (seq 1): /arguments/limit is the integer 9007199254740993 (column ${big.indexOf('9007199254740993') + 1}), beyond ±9007199254740991 (2^53 − 1): JSON.parse reads it rounded to 9007199254740992, so the record_hash would cover another value than the line shows; expected integers a JSON reader keeps exactly`,
    });
    const proto = ls[1]!.replace('"arguments":{', '"arguments":{"__proto__":{"ref":"x"},');
    const p = await verifyLedger([ls[0], proto, ...ls.slice(2)].join('\n'), { file: 'proto.jsonl' });
    expect(p.findings[0]).toMatchObject({ code: 'ledger_bad_record', line: 2, pointer: '/arguments/__proto__' });
    expect(p.findings[0]!.message).toBe(`line 2 (seq 1): /arguments/__proto__ is a key named __proto__ (column ${proto.indexOf('"__proto__"') + 1}), which JavaScript readers drop or take for a prototype; expected a record of schemas/ledger-record.schema.json`);
  });

  it('refuses 1e400 (a number that overflows to Infinity) in a record as non_finite_number, naming the file and line, in every reader of ledgers', async () => {
    // A forger's 1e400 where the runner wrote null hashes the same (RFC 8785 writes Infinity as null), so the chain
    // still verifies: only the reader can refuse it, as every other JSON input refuses it.
    const ls = readFileSync(await sessionLedger(), 'utf8').split('\n');
    const inf = ls[0]!.replace('"max_reads":null', '"max_reads":1e400');
    expect(inf).not.toBe(ls[0]);
    const text = [inf, ...ls.slice(1)].join('\n');
    writeFileSync(join(tmp.dir, 'inf.jsonl'), text);
    const column = inf.indexOf('1e400') + 1;
    const message = `inf.jsonl line 1 (seq 0): /session/budgets/max_reads is the number 1e400 (column ${column}), beyond the largest number a JSON reader keeps (±${Number.MAX_VALUE}): JSON.parse reads it as Infinity, which the record_hash covers as null, so the line shows another value than the one hashed; expected a finite number`;
    const r = await verifyLedger(text, { file: 'inf.jsonl' });
    expect([r.valid, r.first_bad_seq, r.findings]).toEqual([false, 0, [{ code: 'non_finite_number', severity: 'error', path: 'inf.jsonl', line: 1, pointer: '/session/budgets/max_reads', message }]]);
    // ledger verify, ledger export, parseLedger, coverage: the same code, file and line.
    const out = await cli(['ledger', 'verify', 'inf.jsonl']);
    expect([out.code, out.stdout.includes(`\ninf.jsonl:1: [non_finite_number] ${message}\n`)]).toEqual([1, true]);
    await expect(exportLedger(text, { file: 'inf.jsonl' })).rejects.toMatchObject({ code: 'ledger_invalid', details: { line: 1, data: { code: 'non_finite_number' } } });
    expect(() => parseLedger(text, 'inf.jsonl')).toThrow(expect.objectContaining({ code: 'non_finite_number', message, details: expect.objectContaining({ file: 'inf.jsonl', line: 1, pointer: '/session/budgets/max_reads' }) }));
    const minus = ls[2]!.replace(/"seq":2/, '"seq":-1e400');
    expect(() => parseLedger([ls[0], ls[1], minus].join('\n'), 'm.jsonl')).toThrow(expect.objectContaining({ code: 'non_finite_number', details: expect.objectContaining({ line: 3, pointer: '/seq' }) }));
    const cov = await readArtifacts(['inf.jsonl'], { cwd: tmp.dir });
    expect(cov).toEqual({ artifacts: [], skipped: [{ file: 'inf.jsonl', reason: 'not_json', message: `${message} [non_finite_number]` }] });
    // The opening session a lock or verify-trace reads the packet from is not taken from such a line either.
    expect([openingSession(text), openingSession(ls.join('\n')) !== null]).toEqual([null, true]);
    // verify-trace (as capture check runs it) on the honest fragment against a ledger whose line 3 holds -1e400: the
    // ledger is broken at that line with that code; the records before it are still read, nothing throws.
    writeFileSync(join(tmp.dir, 'f.json'), JSON.stringify(await exportLedger(ls.join('\n'), { file: 'session.jsonl', index: await indexVault(FIXTURE_VAULT, { persist: false, workers: false }) }), null, 2) + '\n');
    const late = ls.slice();
    late[2] = late[2]!.replace(/"line_end":(\d+)/, '"line_end":-1e400');
    expect(late[2]).not.toBe(ls[2]);
    writeFileSync(join(tmp.dir, 'late.jsonl'), late.join('\n'));
    const vt = await cli(['verify-trace', '--lore', FIXTURE_VAULT, 'f.json', '--ledger', 'late.jsonl', '--json']);
    const report = JSON.parse(vt.stdout);
    expect([vt.code, report.ledgers[0].disposition, report.ledgers[0].records, report.ledgers[0].detail.startsWith('[non_finite_number] late.jsonl line 3 (seq 2): /outcome/served/0/line_end is the number -1e400 ('), report.totals.ledger_broken > 0]).toEqual([1, 'ledger_broken', 2, true, true]);
  });

  it('reports a torn last record and verifies everything before it', async () => {
    const text = readFileSync(await sessionLedger(), 'utf8');
    const cut = text.slice(0, text.length - 40);
    const r = await verifyLedger(cut);
    expect(r).toMatchObject({ valid: false, records: 9, verified_through_seq: 8, first_bad_seq: 9 });
    expect(r.findings[0]!.code).toBe('ledger_torn_record');
  });

  it('detects records cut off at the end against a pinned head, and warns about a ledger never closed', async () => {
    const ls = lines(await sessionLedger());
    const head = JSON.parse(ls[9]!).record_hash as string;
    const shortened = ls.slice(0, 5).join('\n') + '\n';
    const plain = await verifyLedger(shortened);
    expect(plain).toMatchObject({ valid: true, closed: false, verified_through_seq: 4 });
    expect(plain.findings.map((f) => [f.code, f.severity])).toEqual([['ledger_not_closed', 'warning']]);
    const pinned = await verifyLedger(shortened, { head });
    expect(pinned).toMatchObject({ valid: false, first_bad_seq: 5 });
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
    expect(changed.findings[1]!.message).toBe('seq 8: lines 5-7 of World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md in the vault differ from the text the proxy returned');
    // A returned note deleted from the vault is `ledger_lore_missing`.
    rmSync(join(vault, 'World/Pre-Elysium/Territories.md'));
    const gone = await verifyLedger(text, { index: await indexVault(vault, { persist: false, workers: false }) });
    expect(gone.lore).toEqual({ ranges: 3, matched: 1, mismatched: 1, missing: 1, file_changed: 1 });
    expect(gone.findings.find((f) => f.code === 'ledger_lore_missing')).toMatchObject({
      line: 3, pointer: '/outcome/served',
      message: 'seq 2: World/Pre-Elysium/Territories.md is not a readable indexed note of the vault; expected lines 5-8',
    });
  });
});

/**
 * Records of a v4 ledger as an earlier format version wrote them: `schema_version` set, and the absolute vault
 * root v2 and v3 recorded in their SESSION_OPENED (`lore_root`, which v4 leaves out).
 */
function asVersion(records: readonly Record<string, unknown>[], version: string): Record<string, unknown>[] {
  const session = { ...(records[0]!['session'] as object), lore_root: '/srv/lore/FixtureLore' };
  // The ledger_id is derived from the opening record's occurred_on and session, so it changes with lore_root.
  const id = ledgerIdOf(records[0]!['occurred_on'] as string, session);
  return records.map((r, i) => ({ ...r, schema_version: version, ledger_id: id, ...(i === 0 ? { session } : {}) }));
}

/**
 * What a forger who can write the file does: edit, insert or delete records, then renumber (`seq`,
 * `record_id`, and every `call_record_id` that named a renumbered record) and re-chain every hash, so the
 * chain itself verifies.
 */
function rechain(records: Record<string, unknown>[]): string {
  const id = records[0]!['ledger_id'] as string;
  const renamed = new Map<string, string>();
  records.forEach((r, i) => {
    if (typeof r['record_id'] === 'string' && !renamed.has(r['record_id'])) renamed.set(r['record_id'], `${id}:${i}`);
  });
  let prev = GENESIS_HASH;
  return records.map((r, i) => {
    const rec: Record<string, unknown> = { ...r, seq: i, record_id: `${id}:${i}` };
    if (typeof rec['call_record_id'] === 'string') rec['call_record_id'] = renamed.get(rec['call_record_id']) ?? rec['call_record_id'];
    rec['prev_hash'] = prev;
    rec['record_hash'] = hashLedgerRecord(prev, rec);
    prev = rec['record_hash'] as string;
    return canonicalize(rec) + '\n';
  }).join('');
}

describe('verifyLedger: every call has its one outcome (loretrace.ledger.v3 and v4)', () => {
  // The session ledger: 0 SESSION_OPENED; 1/2 lore_read (TOOL_CALL, TOOL_RESULT); 3/4 lore_read refused;
  // 5/6 lore_follow; 7/8 lore_read; 9 SESSION_CLOSED.
  const records = async () => lines(await sessionLedger()).map((l) => JSON.parse(l) as Record<string, unknown>);
  const codes = (r: Awaited<ReturnType<typeof verifyLedger>>) => r.findings.map((f) => [f.code, f.severity, f.line, f.message]);

  it('reports an outcome whose TOOL_CALL was removed (ledger_outcome_without_call), with its seq', async () => {
    const rs = await records();
    const id = rs[0]!['ledger_id'] as string;
    const r = await verifyLedger(rechain([...rs.slice(0, 3), ...rs.slice(4)]), { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, first_bad_seq: 3, records: 9, verified_through_seq: 8 });
    expect(codes(r)).toEqual([
      ['ledger_outcome_without_call', 'error', 4, `seq 3 (TOOL_REFUSED lore_read) answers call ${id}:3, which is no earlier TOOL_CALL record of this ledger: an outcome without its call`],
    ]);
    await expect(exportLedger(rechain([...rs.slice(0, 3), ...rs.slice(4)]), { file: 'x.jsonl' })).rejects.toMatchObject({ code: 'ledger_invalid', details: { line: 4, data: { code: 'ledger_outcome_without_call' } } });
  });

  it('reports a call whose outcome was removed (ledger_call_without_outcome) in a closed ledger', async () => {
    const rs = await records();
    const id = rs[0]!['ledger_id'] as string;
    const r = await verifyLedger(rechain([...rs.slice(0, 4), ...rs.slice(5)]), { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, first_bad_seq: 3, closed: true, totals: { tool_calls: 3, ok: 3, refused: 0, unanswered: 1 } });
    expect(codes(r)).toEqual([
      ['ledger_call_without_outcome', 'error', 4, `seq 3 is a TOOL_CALL lore_read (${id}:3) that no record answers: a call without its outcome (the outcome record was removed, or the call inserted)`],
      // The closing record still counts the removed outcome.
      ['ledger_totals_mismatch', 'error', 9, "the SESSION_CLOSED record's totals say tool_calls 4, refused 1, but the ledger's outcome records give tool_calls 3, refused 0: records were added or removed after the session closed them, or the totals were edited"],
    ]);
  });

  it('reports a call answered twice (ledger_call_answered_twice) and an outcome of another tool (ledger_call_tool_mismatch)', async () => {
    const rs = await records();
    const id = rs[0]!['ledger_id'] as string;
    const twice = await verifyLedger(rechain([...rs.slice(0, 3), rs[2]!, ...rs.slice(3)]), { file: 'x.jsonl' });
    expect(twice).toMatchObject({ valid: false, first_bad_seq: 3 });
    expect(codes(twice)).toEqual([
      ['ledger_call_answered_twice', 'error', 4, `seq 3 (TOOL_RESULT lore_read) answers call ${id}:1 (seq 1), which seq 2 already answered: one call has one outcome`],
      ['ledger_totals_mismatch', 'error', 11, "the SESSION_CLOSED record's totals say tool_calls 4, ok 3, but the ledger's outcome records give tool_calls 5, ok 4: records were added or removed after the session closed them, or the totals were edited"],
    ]);
    const other = rs.map((r, i) => (i === 6 ? { ...r, tool: 'lore_read' } : r));
    const mismatch = await verifyLedger(rechain(other), { file: 'x.jsonl' });
    expect(mismatch).toMatchObject({ valid: false, first_bad_seq: 6 });
    expect(codes(mismatch)).toEqual([
      ['ledger_call_tool_mismatch', 'error', 7, 'seq 6 (TOOL_RESULT) records tool "lore_read", but the call it answers (seq 5) asked for "lore_follow"'],
    ]);
  });

  it('lets the last record of an unclosed ledger be a call without its answer (ledger_call_pending, a warning)', async () => {
    const rs = await records();
    const id = rs[0]!['ledger_id'] as string;
    const text = rs.slice(0, 4).map((r) => canonicalize(r) + '\n').join('');
    const r = await verifyLedger(text, { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: true, closed: false, first_bad_seq: null, totals: { tool_calls: 1, ok: 1, refused: 0, unanswered: 1 } });
    expect(codes(r)).toEqual([
      ['ledger_call_pending', 'warning', 4, `seq 3 is a TOOL_CALL lore_read (${id}:3) with no outcome, the last record of a ledger that is not closed: the runner stopped while the call ran and its client got no answer`],
      ['ledger_not_closed', 'warning', 4, 'the ledger ends at seq 3 without a SESSION_CLOSED record: the runner did not shut down cleanly (or records were cut off at the end; pass --head to check)'],
    ]);
  });

  it('refuses a v3 outcome without call_record_id and a TOOL_CALL in a v2 ledger (schema)', async () => {
    const rs = await records();
    const { call_record_id: _c, ...bare } = rs[2]!;
    const r = await verifyLedger(rechain([...rs.slice(0, 2), bare, ...rs.slice(3)]), { file: 'x.jsonl' });
    expect(r.findings.map((f) => [f.code, f.line])).toEqual([['ledger_bad_record', 3]]);
    const old = await verifyLedger(rechain(asVersion(rs, 'loretrace.ledger.v2')), { file: 'x.jsonl' });
    expect(old.findings.map((f) => [f.code, f.line])).toEqual([['ledger_bad_record', 2]]);
  });
});

describe('verifyLedger: every served ref against the session policy of SESSION_OPENED', () => {
  const records = async () => lines(await sessionLedger()).map((l) => JSON.parse(l) as Record<string, unknown>);
  /** seq 2 (the first read's TOOL_RESULT) made to claim it served `path` instead. */
  const served = (rs: Record<string, unknown>[], path: string) => rs.map((r, i) => {
    if (i !== 2) return r;
    const outcome = r['outcome'] as { served: Record<string, unknown>[] };
    return { ...r, outcome: { ...outcome, served: [{ ...outcome.served[0], ref: `FixtureLore:${path}#chunk1`, path }] } };
  });

  it('catches a hand-edited, re-chained ledger that "served" a hidden note or a note outside the allowed prefixes (ledger_policy_violation)', async () => {
    const rs = await records();
    const hidden = await verifyLedger(rechain(served(rs, 'World/Pre-Elysium/Author Notes/Brinefall Truth.md')), { file: 'x.jsonl' });
    expect(hidden).toMatchObject({ valid: false, first_bad_seq: 2, verified_through_seq: 9 });
    expect(hidden.findings).toEqual([{
      code: 'ledger_policy_violation', severity: 'error', path: 'x.jsonl', line: 3, pointer: '/outcome/served/0',
      message: 'seq 2 served FixtureLore:World/Pre-Elysium/Author Notes/Brinefall Truth.md#chunk1 lines 5-8: World/Pre-Elysium/Author Notes/Brinefall Truth.md is hidden lore: policy_receipt row /session/policy_receipt/16 (hidden_ref "FixtureLore:World/Pre-Elysium/Author Notes/Brinefall Truth.md") denies it; expected only what the session\'s policy admits (the policy_receipt of this ledger\'s SESSION_OPENED)',
    }]);
    const outside = await verifyLedger(rechain(served(rs, 'Home.md')), { file: 'x.jsonl' });
    expect(outside.findings.map((f) => [f.code, f.line, f.message])).toEqual([[
      'ledger_policy_violation', 3, 'seq 2 served FixtureLore:Home.md#chunk1 lines 5-8: Home.md lies outside every allowed_prefix row of the policy_receipt (/session/policy_receipt/1 "FixtureLore:World/Pre-Elysium/", /session/policy_receipt/2 "FixtureLore:World/Politics/", /session/policy_receipt/3 "FixtureLore:World/Technology/"); expected only what the session\'s policy admits (the policy_receipt of this ledger\'s SESSION_OPENED)',
    ]]);
    await expect(exportLedger(rechain(served(rs, 'Home.md')), { file: 'x.jsonl' })).rejects.toMatchObject({ code: 'ledger_invalid', details: { line: 3, data: { code: 'ledger_policy_violation' } } });
  });

  it('catches a follow and a read beyond the session\'s max_link_depth (ledger_depth_exceeded)', async () => {
    const rs = (await records()).map((r, i) => {
      const o = r['outcome'] as Record<string, unknown> | undefined;
      if (i === 6) return { ...r, outcome: { ...o, admitted: { ...(o!['admitted'] as object), depth: 3 } } };
      if (i === 8) return { ...r, outcome: { ...o, served: (o!['served'] as object[]).map((x) => ({ ...x, depth: 3 })) } };
      return r;
    });
    const r = await verifyLedger(rechain(rs), { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, first_bad_seq: 6 });
    expect(r.findings.map((f) => [f.code, f.line, f.pointer, f.message])).toEqual([
      ['ledger_depth_exceeded', 7, '/outcome/admitted', `seq 6 admitted ${R.blackout} by lore_follow at link depth 3, beyond the session's max_link_depth 2 (policy_receipt row /session/policy_receipt/0); expected only notes within 2 hops of a seed or scope note`],
      ['ledger_depth_exceeded', 9, '/outcome/served/0', `seq 8 served ${R.blackout}#L5-L7 lines 5-7 at link depth 3, beyond the session's max_link_depth 2 (policy_receipt row /session/policy_receipt/0); expected only notes within 2 hops of a seed or scope note`],
      ['ledger_depth_exceeded', 9, '/outcome/served/1', `seq 8 served ${R.blackout}#L9-L11 lines 9-11 at link depth 3, beyond the session's max_link_depth 2 (policy_receipt row /session/policy_receipt/0); expected only notes within 2 hops of a seed or scope note`],
    ]);
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
      [`${id}:2:${prefix(2)}`, `${R.territories}#chunk1`, 1, 5, 8],
      [`${id}:8:${prefix(8)}`, `${R.blackout}#L5-L7`, 0, 5, 7],
      [`${id}:8.1:${prefix(8)}`, `${R.blackout}#L9-L11`, 1, 9, 11],
    ]);
    expect(id).toMatch(/^lt-[0-9a-f]{16}$/);
    // No lore text in the ledger: a served read holds ref, range and the text's sha256.
    expect(readFileSync(path, 'utf8')).not.toContain('Three convoys were lost');
    expect(records[8].outcome.served[0]).toEqual({
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

  it('counts a note a lore_follow admitted as followed even when its text was never read, once, in ledger order', async () => {
    // A live session: one seed read, then two successful follows from it whose targets are never read, then
    // the same follow again (the note is already admitted: newly_admitted false, listed once).
    const path = join(tmp.dir, 'follow-only.jsonl');
    const s = await fixtureSession({ ledgerPath: path });
    await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
    await s.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
    await s.call('lore_follow', { from_ref: R.territories, target: 'Meridian Compact' });
    await s.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
    await s.close();
    const records = lines(path).map((l) => JSON.parse(l));
    expect(records.filter((r) => r.kind === 'TOOL_RESULT' && r.tool === 'lore_follow').map((r) => [r.outcome.status, r.outcome.admitted.path, r.outcome.admitted.newly_admitted])).toEqual([
      ['ok', 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', true],
      ['ok', 'World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md', true],
      ['ok', 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', false],
    ]);
    const index = await indexVault(FIXTURE_VAULT, { persist: false, workers: false });
    const fragment = await exportLedger(readFileSync(path, 'utf8'), { index });
    expect(fragment.consulted_refs).toEqual([R.territories]);
    expect(fragment.followed_refs).toEqual([R.blackout, 'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md']);
    expect(fragment.research_trace.map((e) => [e.source_ref, e.line_start, e.line_end])).toEqual([[`${R.territories}#chunk1`, 5, 8]]);
    const out = join(tmp.dir, 'la.json');
    const r = await cli(['ledger', 'export', path, '--lore', FIXTURE_VAULT, '--out', out]);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toBe(`wrote ${out}: 1 trace entry, 1 consulted ref, 2 followed refs (snapshot 3e69bbc3a488bce1d4e22667dfb6146c4ec33cddb23d7e0424331d09072859dd; ledger head ${records.at(-1).record_hash})\n`);
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
    expect(err).toMatchObject({ code: 'ledger_lore_mismatch', details: { file: 's.jsonl', line: 9, pointer: '/outcome/served' } });
    expect((err as Error).message).toMatch(/^seq 8: lines 5-7 of World\/Pre-Elysium\/Timeline\/Events\/Brinefall Blackout\.md no longer hash to the recorded text_sha256 [0-9a-f]{64} \(vault snapshot [0-9a-f]{64}\); the served text cannot be re-derived — nothing exported$/);
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

  it('still reads, verifies and exports loretrace.ledger.v2 ledgers written before TOOL_CALL records (proxy and retrieve)', async () => {
    const index = await indexVault(FIXTURE_VAULT, { persist: false, workers: false });
    const proxy = readFileSync(join(REPO, 'lore-fixtures/ledgers/ledger.ilse.v2.jsonl'), 'utf8');
    const pr = await verifyLedger(proxy, { file: 'ledger.ilse.v2.jsonl', index });
    expect(pr).toMatchObject({
      valid: true, schema_version: 'loretrace.ledger.v2', records: 7, closed: true, first_bad_seq: null,
      totals: { tool_calls: 5, ok: 4, refused: 1, unanswered: 0 }, lore: { ranges: 3, matched: 3, mismatched: 0, missing: 0, file_changed: 0 }, findings: [],
    });
    const ids = proxy.trim().split('\n').map((l) => JSON.parse(l).record_hash.slice(0, 12) as string);
    const fragment = await exportLedger(proxy, { index });
    expect(fragment.research_trace.map((e) => [e.trace_id, e.source_ref, e.query])).toEqual([
      [`${pr.ledger_id}:1:${ids[1]}`, `${R.territories}#chunk1`, `lore_read ${R.territories}#Brinefall Shelf`],
      [`${pr.ledger_id}:2:${ids[2]}`, `${R.factions}#chunk2`, `lore_read ${R.factions}#Movements`],
      [`${pr.ledger_id}:5:${ids[5]}`, `${R.blackout}#chunk1`, `lore_read ${R.blackout}#chunk1`],
    ]);
    const verdict = await verifyTrace(index, fragment, { file: 'fragment.json', ledgers: [{ file: 'ledger.ilse.v2.jsonl', text: proxy }] });
    expect([verdict.integrity_ok, verdict.verdict, verdict.runner_captured]).toEqual([true, 'integrity_only', { checked: 3, failed: 0, ledger_backed: 3 }]);
    const retrieve = readFileSync(join(REPO, 'lore-fixtures/ledgers/ledger.mara-retrieve.v2.jsonl'), 'utf8');
    const rr = await verifyLedger(retrieve, { file: 'ledger.mara-retrieve.v2.jsonl', index });
    expect(rr).toMatchObject({ valid: true, schema_version: 'loretrace.ledger.v2', records: 8, closed: true, totals: { tool_calls: 6, ok: 6, refused: 0, unanswered: 0 }, findings: [] });
    const exported = await exportLedger(retrieve, { index });
    expect(exported.research_trace.map((e) => [e.trace_id.split(':')[1], e.source_ref])).toEqual([
      ['4', 'FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk1'],
      ['5', 'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md#chunk3'],
      ['6', 'FixtureLore:World/Pre-Elysium/Factions/Movements/Quiet Hands.md#chunk1'],
    ]);
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
  it('verify of an unsigned ledger without a trusted key prints UNAUTHENTICATED and exits 1 (0 with --integrity-only); --json gives the report', async () => {
    const path = await sessionLedger();
    const text = await cli(['ledger', 'verify', path]);
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: UNAUTHENTICATED — chain and hashes intact, authorship not checked \\(no trusted key\\): anyone can write such a ledger; 10 records \\(seq 0-9\\), chain intact, closed by SESSION_CLOSED; head [0-9a-f]{64}\\n`));
    const json = await cli(['ledger', 'verify', path, '--json', '--lore', FIXTURE_VAULT, '--integrity-only']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ valid: true, verdict: 'integrity_only', records: 10, lore: { ranges: 3, matched: 3 } });
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

  it('verify --head of a ledger cut off after whole records says the pinned head was not found and where the ledger ends', async () => {
    const path = await sessionLedger();
    const ls = lines(path);
    const head = JSON.parse(ls[5]!).record_hash as string;
    writeFileSync(path, ls.slice(0, 3).join('\n') + '\n');
    const plain = await cli(['ledger', 'verify', path, '--integrity-only']);
    expect(plain.code).toBe(0);
    expect(plain.stdout).toContain('[ledger_not_closed]');
    const pinned = await cli(['ledger', 'verify', path, '--head', head]);
    expect(pinned.code).toBe(1);
    const end = JSON.parse(ls[2]!).record_hash as string;
    expect(pinned.stdout.split('\n')[0]).toBe(`${path}: INVALID — the pinned head ${head} was not found: no record of the ledger has that record_hash; the ledger ends at seq 2 (head ${end}) — records after it were cut off, or the head is another ledger's; 3 records verify (seq 0-2)`);
    expect(pinned.stdout).not.toContain('first bad seq');
  });

  it('verify --head of an earlier record says which record it is and where the ledger ends', async () => {
    const path = await sessionLedger();
    const ls = lines(path);
    const early = JSON.parse(ls[1]!).record_hash as string;
    const n = ls.length;
    const last = JSON.parse(ls[n - 1]!).record_hash as string;
    const r = await cli(['ledger', 'verify', path, '--head', early]);
    expect(r.code).toBe(1);
    expect(r.stdout.split('\n')[0]).toBe(`${path}: INVALID — the pinned head ${early} is the record_hash of seq 1, not of the last record; the ledger ends at seq ${n - 1} (head ${last}): records were added after the head was pinned; ${n} records verify (seq 0-${n - 1})`);
  });
});

describe('verifyLedger: each line is the byte form its record was written in (ledger_not_canonical)', () => {
  const notCanonical = (line: number, how: string, file = 'x.jsonl') => ({
    code: 'ledger_not_canonical', severity: 'error', path: file, line,
    message: `${file} line ${line} (seq ${line - 1}) is not the byte form its record was written in: ${how}; the record_hash covers that form, so these bytes are another document than the one hashed (re-saved or re-formatted after the run)`,
  });
  const RFC = 'the RFC 8785 form of its record (keys sorted, no white space)';

  it('refuses a v4 line with a CRLF line end, white space, another escape or its keys reordered — the parse and the hash unchanged', async () => {
    const text = readFileSync(await sessionLedger(), 'utf8');
    const ls = text.split('\n').slice(0, -1);
    expect((await verifyLedger(text, { file: 'x.jsonl' })).findings).toEqual([]);
    const crlf = await verifyLedger(text.replace(/\n/g, '\r\n'), { file: 'x.jsonl' });
    expect(crlf).toMatchObject({ valid: false, records: 0, first_bad_seq: 0, verified_through_seq: null });
    expect(crlf.findings).toEqual([notCanonical(1, `it ends in a carriage return (a CRLF line end); expected ${RFC} and a line feed alone`)]);
    const at = async (n: number, line: string) => {
      expect(JSON.parse(line)).toEqual(JSON.parse(ls[n]!));
      const r = await verifyLedger([...ls.slice(0, n), line, ...ls.slice(n + 1)].join('\n') + '\n', { file: 'x.jsonl' });
      expect(r).toMatchObject({ valid: false, records: n, first_bad_seq: n, verified_through_seq: n - 1 });
      return r.findings;
    };
    expect(await at(2, ls[2]!.replace('{"actor":', '{ "actor":'))).toEqual([notCanonical(3, `it differs from ${RFC} at column 2 (" \\"actor\\":{\\"i" where "\\"actor\\":{\\"id" was expected)`)]);
    const kind = ls[2]!.indexOf('"kind":"TOOL_RESULT"');
    expect(await at(2, ls[2]!.replace('"kind":"TOOL_RESULT"', '"kind":"TOOL_RESUL\\u0054"'))).toEqual([notCanonical(3, `it differs from ${RFC} at column ${kind + 19} ("\\\\u0054\\",\\"led" where "T\\",\\"ledger_i" was expected)`)]);
    const rec = JSON.parse(ls[4]!) as Record<string, unknown>;
    const reordered = JSON.stringify({ seq: rec['seq'], ...rec });
    expect(await at(4, reordered)).toEqual([notCanonical(5, `its keys are not in RFC 8785 order (first difference at column 3); expected ${RFC}`)]);
    // Every command reads ledgers through verifyLedger: ledger verify names the file and line, verify-trace breaks the ledger.
    writeFileSync(join(tmp.dir, 'crlf.jsonl'), text.replace(/\n/g, '\r\n'));
    const out = await cli(['ledger', 'verify', 'crlf.jsonl']);
    expect(out.code).toBe(1);
    expect(out.stdout).toContain(`\ncrlf.jsonl:1: [ledger_not_canonical] crlf.jsonl line 1 (seq 0) is not the byte form its record was written in: it ends in a carriage return (a CRLF line end);`);
  });

  it('still reads a loretrace.ledger.v3 ledger of JSON.stringify lines; refuses its lines with CRLF or white space, not one with its keys reordered (v3 cannot say which order was written)', async () => {
    const text = rechain(asVersion(lines(await sessionLedger()).map((l) => JSON.parse(l) as Record<string, unknown>), 'loretrace.ledger.v3'));
    const ok = await verifyLedger(text, { file: 'v3.jsonl' });
    expect(ok).toMatchObject({ valid: true, schema_version: 'loretrace.ledger.v3', records: 10, closed: true, findings: [] });
    const ls = text.split('\n').slice(0, -1);
    const rec = JSON.parse(ls[3]!) as Record<string, unknown>;
    const reordered = [...ls.slice(0, 3), JSON.stringify({ seq: rec['seq'], ...rec }), ...ls.slice(4)].join('\n') + '\n';
    expect((await verifyLedger(reordered, { file: 'v3.jsonl' })).findings).toEqual([]);
    const FORM = "loretrace.ledger.v3's written form (JSON.stringify of its record: no white space)";
    const crlf = await verifyLedger(text.replace(/\n/g, '\r\n'), { file: 'v3.jsonl' });
    expect(crlf.findings).toEqual([notCanonical(1, `it ends in a carriage return (a CRLF line end); expected ${FORM} and a line feed alone`, 'v3.jsonl')]);
    const pretty = [...ls.slice(0, 3), ls[3]!.replace('{"actor":', '{"actor": '), ...ls.slice(4)].join('\n') + '\n';
    expect((await verifyLedger(pretty, { file: 'v3.jsonl' })).findings).toEqual([notCanonical(4, `it differs from ${FORM} at column 10 (" {\\"id\\":\\"dock" where "{\\"id\\":\\"dock_" was expected)`, 'v3.jsonl')]);
  });
});

describe('loretrace.ledger.v4 records no vault location (a verifier needs the snapshot and vault-relative paths)', () => {
  it('the same session on the vault copied to another folder writes the same ledger, byte for byte; no record names the folder', async () => {
    const here = join(tmp.dir, 'here', 'FixtureLore');
    const there = join(tmp.dir, 'moved', 'elsewhere', 'FixtureLore');
    cpSync(FIXTURE_VAULT, here, { recursive: true });
    cpSync(FIXTURE_VAULT, there, { recursive: true });
    const first = readFileSync(await sessionLedger(here), 'utf8');
    rmSync(join(tmp.dir, 'session.jsonl'));
    const second = readFileSync(await sessionLedger(there), 'utf8');
    expect(second).toBe(first);
    expect(first).not.toContain(tmp.dir);
    expect(Object.keys(JSON.parse(first.split('\n')[0]!).session)).toEqual([
      'admitted', 'budgets', 'limits', 'loretrace_version', 'mode', 'namespace', 'not_admitted', 'packet_file', 'packet_id', 'packet_sha256', 'policy_receipt',
      'required_seeds', 'runner', 'snapshot_id',
    ]);
  });

  it('refuses a v4 SESSION_OPENED that names lore_root, and a v3 one that lacks it (schema); a v2 ledger with it still verifies', async () => {
    const ls = lines(await sessionLedger());
    const opened = JSON.parse(ls[0]!) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const withRoot = rechain([{ ...opened, session: { ...opened.session, lore_root: '/srv/lore/FixtureLore' } }, ...ls.slice(1).map((l) => JSON.parse(l) as Record<string, unknown>)]);
    const r = await verifyLedger(withRoot, { file: 'x.jsonl' });
    expect(r).toMatchObject({ valid: false, records: 0, first_bad_seq: 0 });
    expect(r.findings[0]).toMatchObject({ code: 'ledger_bad_record', line: 1, pointer: '/session' });
    const v3 = rechain(ls.map((l) => ({ ...(JSON.parse(l) as Record<string, unknown>), schema_version: 'loretrace.ledger.v3' })));
    const missing = await verifyLedger(v3, { file: 'v3.jsonl' });
    expect(missing.findings[0]).toMatchObject({ code: 'ledger_bad_record', line: 1, pointer: '/session', message: "line 1 (seq 0): /session must have required property 'lore_root' (required); expected a record of schemas/ledger-record.schema.json" });
    const v2 = readFileSync(join(REPO, 'lore-fixtures/ledgers/ledger.ilse.v2.jsonl'), 'utf8');
    expect(JSON.parse(v2.split('\n')[0]!).session.lore_root).toEqual(expect.any(String));
    expect((await verifyLedger(v2, { file: 'ledger.ilse.v2.jsonl' })).findings.filter((f) => f.severity === 'error')).toEqual([]);
  });
});

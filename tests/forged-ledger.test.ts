/**
 * A receipt anyone could write by hand is worthless (seed 001; docs/RECEIPTS.md "Authorship"). Here a forger
 * who can write the files builds a ledger, capture fragment and lock by hand: every ledger record re-written
 * (another `occurred_on` after the opening record) and re-hashed so the chain is intact, no signature (the forger has no runner key),
 * the fragment's trace_ids and ledger_head re-bound to the new hashes, and the lock's sha256s, byte counts and
 * pinned head re-computed. Every verifying command — `verify-trace`, `ledger verify`, `lock verify`,
 * `capture check` — must then refuse it without a trusted key (`UNAUTHENTICATED`, exit 1), accept it only
 * with `--integrity-only` (exit 0, its verdict still saying integrity only), and refuse it with a trusted key
 * that did not sign it (`ledger_unsigned`, exit 1). `capture` assembles it as `draft` with
 * `ledger_authorship_not_checked`, and a capture edited to `accepted_as_draft` (its lock re-hashed) is a review
 * mismatch even with `--integrity-only`. And a signed session with a read inserted, the chain re-hashed and
 * re-signed but its `SESSION_CLOSED` totals left as the runner wrote them, fails `ledger verify` with
 * `ledger_totals_mismatch` even under the trusted key.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GENESIS_HASH, hashLedgerRecord } from '../src/receipts/ledger.js';
import type { LedgerRecord } from '../src/receipts/ledger.js';
import { canonicalJson } from '../src/receipts/ledger-record.js';
import { writeTestKey } from './helpers/keys.js';
import { runCliIn } from './helpers/cli.js';
import { fixtureSession, R, tempDir } from './helpers/proxy.js';
import { FIXTURES, FIXTURE_VAULT } from './helpers/shared.js';

const PACKETS = join(FIXTURES, 'packets');
const MARA_RAW = join(FIXTURES, 'captures', 'mara-voss.turn-01.raw.json');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const UNAUTHENTICATED = 'UNAUTHENTICATED — chain and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger';
const INTEGRITY_ONLY = 'INTEGRITY ONLY (--integrity-only) — chain and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger';
const LOCK_UNAUTHENTICATED = 'UNAUTHENTICATED — files and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger';
const LOCK_INTEGRITY_ONLY = 'INTEGRITY ONLY (--integrity-only) — files and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger';

describe('a ledger, fragment and lock forged by hand (re-hashed, chain intact, unsigned)', () => {
  let tmp: { dir: string; cleanup: () => void };
  const at = (f: string) => join(tmp.dir, f);
  const read = (f: string) => readFileSync(at(f), 'utf8');

  const run = (argv: string[]) => runCliIn(tmp.dir, argv);
  const lastLine = (out: string) => out.trimEnd().split('\n').at(-1);
  const firstLine = (out: string) => out.split('\n')[0];

  /**
   * The forgery: re-write every record of the runner's ledger (another `occurred_on` after the opening record), re-hash the chain from
   * the genesis hash and drop the signature; then replace every old record_hash (whole or as a trace_id's
   * 12-digit prefix) in the fragment and the lock, and re-compute the lock's sha256s and byte counts.
   */
  function forge(): void {
    const records = read('mara.packet.ledger.jsonl').trimEnd().split('\n').map((l) => JSON.parse(l) as LedgerRecord);
    let prev = GENESIS_HASH;
    const renamed = new Map<string, string>();
    const lines: string[] = [];
    for (const r of records) {
      const { prev_hash: _p, record_hash: old, signature: _s, ...body } = r;
      // The ledger_id is derived from the opening record's occurred_on and session: the forger keeps those.
      const rec: Record<string, unknown> = r.seq === 0 ? { ...body } : { ...body, occurred_on: '2030-01-01T00:00:00.000Z' };
      const hash = hashLedgerRecord(prev, rec);
      renamed.set(old, hash);
      lines.push(canonicalJson({ ...rec, prev_hash: prev, record_hash: hash }));
      prev = hash;
    }
    writeFileSync(at('mara.packet.ledger.jsonl'), lines.join('\n') + '\n');
    const rebind = (text: string) => {
      let out = text;
      for (const [old, hash] of renamed) out = out.split(old).join(hash).split(old.slice(0, 12)).join(hash.slice(0, 12));
      return out;
    };
    writeFileSync(at('mara.lore_access.json'), rebind(read('mara.lore_access.json')));
    const lock = JSON.parse(rebind(read('mara.packet.lock.json')));
    for (const f of lock.files as { path: string; sha256: string; bytes: number }[]) {
      f.sha256 = sha256(readFileSync(at(f.path)));
      f.bytes = statSync(at(f.path)).size;
    }
    lock.ledger.signer_key_id = null;
    writeFileSync(at('mara.packet.lock.json'), JSON.stringify(lock, null, 2) + '\n');
  }

  beforeAll(async () => {
    tmp = tempDir('loretrace-forged-');
    copyFileSync(MARA_RAW, at('mara.raw.json'));
    const runner = writeTestKey(tmp.dir, 1);
    const r = await run([
      'retrieve', '--lore', FIXTURE_VAULT, '--packet', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'),
      '--projected-context', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'),
      '--policy', join(PACKETS, 'brinefall-intake.policy.json'), '--out', 'mara.packet.json', '--capture-out', 'mara.lore_access.json',
      '--signing-key', runner.privatePath,
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    forge();
  });
  afterAll(() => tmp?.cleanup());

  it('is intact as a chain: ledger verify without a key says UNAUTHENTICATED and exits 1; --integrity-only exits 0, still saying so; the runner key refuses it', async () => {
    const plain = await run(['ledger', 'verify', 'mara.packet.ledger.jsonl']);
    expect([plain.code, firstLine(plain.out)]).toEqual([1, `mara.packet.ledger.jsonl: ${UNAUTHENTICATED}; 14 records (seq 0-13), chain intact, closed by SESSION_CLOSED; head ${JSON.parse(read('mara.packet.ledger.jsonl').trimEnd().split('\n').at(-1)!).record_hash}`]);
    expect(JSON.parse((await run(['ledger', 'verify', 'mara.packet.ledger.jsonl', '--json'])).out)).toMatchObject({ valid: true, verdict: 'integrity_only', authorship: { checked: false, status: 'not_checked' } });
    const opted = await run(['ledger', 'verify', 'mara.packet.ledger.jsonl', '--integrity-only']);
    expect([opted.code, firstLine(opted.out)]).toEqual([0, firstLine(plain.out)!.replace(UNAUTHENTICATED, INTEGRITY_ONLY)]);
    const keyed = await run(['ledger', 'verify', 'mara.packet.ledger.jsonl', '--trust-key', 'key1.pub.pem']);
    expect([keyed.code, firstLine(keyed.out)]).toEqual([1, 'mara.packet.ledger.jsonl: INVALID — chain intact, authorship ledger_unsigned; 14 records verify (seq 0-13)']);
  });

  it('verify-trace on the fragment (the lock found beside it): UNAUTHENTICATED exit 1, INTEGRITY ONLY exit 0 with --integrity-only, FAILED with the runner key', async () => {
    const plain = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json']);
    expect([plain.code, lastLine(plain.out)]).toEqual([1, `runner_captured: 3 entries: 3 ledger-backed and verified, 0 failed — ${UNAUTHENTICATED}`]);
    const json = JSON.parse((await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json', '--json'])).out);
    expect([json.verdict, json.ok, json.integrity_ok, json.authorship.checked]).toEqual(['integrity_only', false, true, false]);
    const opted = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json', '--integrity-only']);
    expect([opted.code, lastLine(opted.out)]).toEqual([0, `runner_captured: 3 entries: 3 ledger-backed and verified, 0 failed — ${INTEGRITY_ONLY}`]);
    const keyed = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json', '--trust-key', 'key1.pub.pem']);
    expect([keyed.code, lastLine(keyed.out)]).toEqual([1, 'runner_captured: 3 entries: 0 ledger-backed and verified, 3 failed; session: ledger_unsigned 1 — FAILED']);
  });

  it('lock verify: UNAUTHENTICATED exit 1, INTEGRITY ONLY exit 0 with --integrity-only, FAILED (ledger authorship) with the runner key', async () => {
    const plain = await run(['lock', 'verify', 'mara.packet.lock.json']);
    expect([plain.code, firstLine(plain.out), lastLine(plain.out)]).toEqual([1, `lock mara.packet.lock.json (retrieve, ready_for_next_role): ${LOCK_UNAUTHENTICATED}`,
      'totals: 1 lock, ok 0, integrity_only 1, drift 0, unreadable 0, files_unchanged 6, files_changed 0, files_missing 0, snapshot_unchanged 0, snapshot_changed 0, snapshot_not_checked 1, snapshot_other_vault 0, snapshot_not_recorded 0, authorship_failed 0']);
    const opted = await run(['lock', 'verify', 'mara.packet.lock.json', '--integrity-only']);
    expect([opted.code, firstLine(opted.out)]).toEqual([0, `lock mara.packet.lock.json (retrieve, ready_for_next_role): ${LOCK_INTEGRITY_ONLY}`]);
    const keyed = await run(['lock', 'verify', 'mara.packet.lock.json', '--trust-key', 'key1.pub.pem']);
    expect([keyed.code, firstLine(keyed.out)]).toEqual([1, 'lock mara.packet.lock.json (retrieve, ready_for_next_role): FAILED (ledger authorship)']);
  });

  it('capture assembles it as draft (ledger_authorship_not_checked), valid; capture check refuses it without a key, accepts it only with --integrity-only, and fails it with the runner key', async () => {
    const made = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'mara.packet.json', '--raw-output', 'mara.raw.json', '--ledger', 'mara.packet.ledger.jsonl',
      '--out', 'mara.capture.json', '--model-family', 'fixture responder', '--reviewer', 'Ghostlight maintainer']);
    expect(made.code).toBe(0);
    const capture = JSON.parse(read('mara.capture.json'));
    expect([capture.review_status, capture.coordinator_review.failure_labels]).toEqual(['draft', ['ledger_authorship_not_checked']]);
    expect(capture.coordinator_review.review_notes.at(-1)).toBe('review_status draft: ledger_authorship_not_checked. accepted_for_training stays false.');
    const plain = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json']);
    expect([plain.code, firstLine(plain.out)]).toEqual([1, `mara.capture.json: ${UNAUTHENTICATED} (draft: review_status draft, failure_label ledger_authorship_not_checked)`]);
    const opted = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--integrity-only']);
    expect([opted.code, firstLine(opted.out)]).toEqual([0, `mara.capture.json: ${INTEGRITY_ONLY} (draft: review_status draft, failure_label ledger_authorship_not_checked)`]);
    const keyed = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--trust-key', 'key1.pub.pem']);
    expect([keyed.code, firstLine(keyed.out)]).toEqual([1, 'mara.capture.json: FAILED (draft: review_status draft, failure_label ledger_authorship_not_checked)']);
  });

  it('a capture of it edited to accepted_as_draft, its lock re-hashed: without a key UNAUTHENTICATED, its acceptance not checked (pass --trust-key) and refused by --require-accepted even with --integrity-only; with the runner key FAILED', async () => {
    const capture = JSON.parse(read('mara.capture.json'));
    capture.review_status = 'accepted_as_draft';
    capture.coordinator_review.failure_labels = [];
    writeFileSync(at('mara.capture.json'), JSON.stringify(capture, null, 2) + '\n');
    const lock = JSON.parse(read('mara.capture.lock.json'));
    for (const f of lock.files as { path: string; sha256: string; bytes: number }[]) {
      f.sha256 = sha256(readFileSync(at(f.path)));
      f.bytes = statSync(at(f.path)).size;
    }
    writeFileSync(at('mara.capture.lock.json'), JSON.stringify(lock, null, 2) + '\n');
    // Without a key a forged and a genuine signed ledger look the same: the acceptance is an authorship question.
    const notChecked = '  review: not checked — review_status "accepted_as_draft" rests on the ledger\'s authorship, which was not checked (no trusted key): re-derived without one it is draft (ledger_authorship_not_checked), so its acceptance is neither upheld nor refused — pass --trust-key (or LORETRACE_TRUSTED_KEYS, or trusted_keys in a --config file outside the vault) [capture_review_authorship_not_checked]';
    const plain = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json']);
    expect([plain.code, firstLine(plain.out), plain.out.split('\n').filter((l) => l.startsWith('  review:'))]).toEqual([1, `mara.capture.json: ${UNAUTHENTICATED}`, [notChecked]]);
    const opted = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--integrity-only']);
    expect([opted.code, firstLine(opted.out)]).toEqual([0, `mara.capture.json: ${INTEGRITY_ONLY}`]);
    const gated = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--integrity-only', '--require-accepted', '--json']);
    const c = JSON.parse(gated.out).captures[0];
    expect([gated.code, c.verdict, c.review, c.review_unchecked.code, c.not_accepted]).toEqual([1, 'failed', [], 'capture_review_authorship_not_checked',
      'not accepted: review_status accepted_as_draft was not checked (capture_review_authorship_not_checked): pass --trust-key to check the ledger\'s authorship']);
    const keyed = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--trust-key', 'key1.pub.pem']);
    expect([keyed.code, firstLine(keyed.out)]).toEqual([1, 'mara.capture.json: FAILED']);
    expect(keyed.out).toContain('  review: mara.capture.json /review_status: review_status is "accepted_as_draft" but the receipts and the re-run leakage audit give draft (ledger_unsigned) [capture_review_mismatch]');
  });
});

describe("a SESSION_CLOSED record's totals are held to the records (a read inserted, the chain re-hashed and re-signed)", () => {
  let tmp: { dir: string; cleanup: () => void };
  beforeAll(() => {
    tmp = tempDir('loretrace-totals-');
  });
  afterAll(() => tmp?.cleanup());

  it('ledger verify --trust-key: INVALID with ledger_totals_mismatch at the closing record, exit 1; the genuine ledger passes', async () => {
    const runner = writeTestKey(tmp.dir, 1);
    const s = await fixtureSession({ ledgerPath: join(tmp.dir, 'session.jsonl'), signer: runner.key.signer });
    await s.call('lore_read', { ref: R.territories });
    await s.call('lore_read', { ref: R.factions });
    await s.close();
    const genuine = await runCliIn(tmp.dir, ['ledger', 'verify', 'session.jsonl', '--trust-key', 'key1.pub.pem']);
    expect([genuine.code, genuine.out.split('\n')[2]]).toEqual([0, '  tool calls: 2 (ok 2, refused 0)']);
    // The forger holds the runner key here: the signature cannot stop it, the totals the session wrote still disagree.
    const records = readFileSync(join(tmp.dir, 'session.jsonl'), 'utf8').trimEnd().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const closing = records.pop()!;
    const call = structuredClone(records[1]!);
    const result = structuredClone(records[2]!);
    records.push(call, result, closing);
    let prev = GENESIS_HASH;
    const lines: string[] = [];
    records.forEach((r, seq) => {
      const { prev_hash: _p, record_hash: _h, signature: _s, ...body } = r;
      const rec: Record<string, unknown> = { ...body, seq, record_id: `${String(r['ledger_id'])}:${seq}` };
      if (r === result) rec['call_record_id'] = `${String(r['ledger_id'])}:${seq - 1}`;
      if (r === closing) rec['signature'] = runner.key.signer.sign({ ...rec, prev_hash: prev });
      const hash = hashLedgerRecord(prev, rec);
      lines.push(canonicalJson({ ...rec, prev_hash: prev, record_hash: hash }));
      prev = hash;
    });
    writeFileSync(join(tmp.dir, 'forged.jsonl'), lines.join('\n') + '\n');
    const r = await runCliIn(tmp.dir, ['ledger', 'verify', 'forged.jsonl', '--trust-key', 'key1.pub.pem']);
    expect([r.code, r.out.split('\n')[0], r.out.split('\n')[3]]).toEqual([1, 'forged.jsonl: INVALID — first bad seq 7; 8 records verify (seq 0-7)', '  authorship: signed by trusted key 34750f98bd59fcfc (key1.pub.pem)']);
    expect(r.out).toContain('forged.jsonl:8: [ledger_totals_mismatch] the SESSION_CLOSED record\'s totals say tool_calls 2, ok 2, but the ledger\'s outcome records give tool_calls 3, ok 3: records were added or removed after the session closed them, or the totals were edited\n');
    expect(JSON.parse((await runCliIn(tmp.dir, ['ledger', 'verify', 'forged.jsonl', '--trust-key', 'key1.pub.pem', '--json'])).out)).toMatchObject({ valid: false, verdict: 'failed', totals: { tool_calls: 3, ok: 3, refused: 0, unanswered: 0 } });
  });
});

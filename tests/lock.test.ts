/**
 * Locked, versioned artifacts (src/receipts/lock.ts, src/cli/outputs.ts): the `<name>.lock.json` that
 * `retrieve`, `capture` and `ledger export` write (seed 002's packet.lock.json shape, schemas/lock.schema.json),
 * the never-overwrite rule, and `loretrace lock verify` with every disposition and totals (seed 003: zeros
 * included), on the bundled FixtureLore files only.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { outputSchema } from '../src/contracts/schemas.js';
import { buildLock, findLockFor, lockPathFor, lockedPaths, verifyLock } from '../src/receipts/lock.js';
import { bindTraceToLedger } from '../src/receipts/ledger-export.js';
import { fakeClock, fixtureSession, PROXY_PACKET, R, tempDir } from './helpers/proxy.js';
import { FIXTURES, FIXTURE_VAULT } from './helpers/shared.js';

const DRAFT = join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json');
const POLICY = join(FIXTURES, 'packets', 'brinefall-intake.policy.json');
const MARA_RAW = join(FIXTURES, 'captures', 'mara-voss.turn-01.raw.json');
const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex');
const read = (f: string): string => readFileSync(f, 'utf8');

let tmp: { dir: string; cleanup: () => void };
let snapshot = '';

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp.dir, 'index') }, cwd: tmp.dir });
  return { code, out, err };
}

beforeAll(async () => {
  tmp = tempDir('loretrace-lock-');
  copyFileSync(DRAFT, join(tmp.dir, 'draft.json'));
  copyFileSync(POLICY, join(tmp.dir, 'policy.json'));
  copyFileSync(MARA_RAW, join(tmp.dir, 'mara.raw.json'));
  const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', 'draft.json', '--policy', 'policy.json', '--out', 'p.json', '--capture-out', 'c.json', '--json']);
  expect(r.code).toBe(0);
  snapshot = JSON.parse(r.out).snapshot_id;
});
afterAll(() => tmp?.cleanup());

describe('lockPathFor', () => {
  it('puts <name>.lock.json beside the output', () => {
    expect(lockPathFor('/a/x.capture.json')).toBe('/a/x.capture.lock.json');
    expect(lockPathFor('/a/session')).toBe('/a/session.lock.json');
  });
});

describe('buildLock', () => {
  it('lists outputs first, with sha256 and bytes of the content given, paths relative to the lock', () => {
    const lock = buildLock({
      lockPath: '/w/out/x.lock.json', status: 'ready_for_next_role', command: 'capture',
      files: [{ abs: '/w/in/p.json', role: 'input', content: 'p' }, { abs: '/w/out/x.json', role: 'output', content: 'xx' }],
      snapshot: null, policyReceipt: null, ledger: null, traceBindings: [],
    });
    expect(lock.files).toEqual([
      { path: 'x.json', sha256: sha('xx'), role: 'output', bytes: 2 },
      { path: '../in/p.json', sha256: sha('p'), role: 'input', bytes: 1 },
    ]);
    expect(outputSchema('lock')(lock)).toBe(true);
  });

  it('refuses a file listed twice', () => {
    expect(() => buildLock({
      lockPath: '/w/x.lock.json', status: 'draft', command: 'retrieve',
      files: [{ abs: '/w/x.json', role: 'output', content: '' }, { abs: '/w/x.json', role: 'input', content: '' }],
      snapshot: null, policyReceipt: null, ledger: null, traceBindings: [],
    })).toThrow(/listed twice/);
  });
});

describe('retrieve writes a lock', () => {
  it('in seed 002\'s shape, with the snapshot, the policy receipt, the run\'s ledger and one trace binding per entry; valid by schemas/lock.schema.json', async () => {
    const lock = JSON.parse(read(join(tmp.dir, 'p.lock.json')));
    expect(outputSchema('lock')(lock)).toBe(true);
    expect(Object.keys(lock)).toEqual(['schema_version', 'status', 'command', 'files', 'snapshot', 'policy_receipt', 'ledger', 'trace_bindings']);
    expect([lock.schema_version, lock.status, lock.command]).toEqual(['loretrace.lock.v1', 'ready_for_next_role', 'retrieve']);
    expect(lock.files).toEqual([
      { path: 'p.json', sha256: sha(readFileSync(join(tmp.dir, 'p.json'))), role: 'output', bytes: readFileSync(join(tmp.dir, 'p.json')).length },
      { path: 'p.ledger.jsonl', sha256: sha(readFileSync(join(tmp.dir, 'p.ledger.jsonl'))), role: 'output', bytes: readFileSync(join(tmp.dir, 'p.ledger.jsonl')).length },
      { path: 'c.json', sha256: sha(readFileSync(join(tmp.dir, 'c.json'))), role: 'output', bytes: readFileSync(join(tmp.dir, 'c.json')).length },
      { path: 'draft.json', sha256: sha(readFileSync(DRAFT)), role: 'input', bytes: readFileSync(DRAFT).length },
      { path: 'policy.json', sha256: sha(readFileSync(POLICY)), role: 'input', bytes: readFileSync(POLICY).length },
    ]);
    expect(lock.snapshot).toEqual({ namespace: 'FixtureLore', snapshot_id: snapshot });
    const fragment = JSON.parse(read(join(tmp.dir, 'c.json')));
    expect(lock.policy_receipt).toEqual(fragment.policy_receipt);
    // The run's own ledger is pinned, and every entry is bound to the record that read it.
    const bound = await bindTraceToLedger(read(join(tmp.dir, 'p.ledger.jsonl')), fragment.research_trace);
    expect(lock.ledger).toEqual({ path: 'p.ledger.jsonl', ...bound.ledger });
    expect(lock.ledger.closed).toBe(true);
    expect(lock.ledger.head).toBe(fragment.ledger_head);
    expect(lock.trace_bindings).toEqual(bound.bindings.map((b) => ({ ...b, ledger_backed: true })));
    expect(lock.trace_bindings.map((b: { trace_id: string }) => b.trace_id)).toEqual(fragment.research_trace.map((t: { trace_id: string }) => t.trace_id));
  });

  it('never overwrites: an existing output needs --force, a locked one is refused even then', async () => {
    const again = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', 'draft.json', '--policy', 'policy.json', '--out', 'p.json', '--force']);
    expect(again.code).toBe(2);
    expect(again.err).toBe(`loretrace: --out ${join(tmp.dir, 'p.json')} is listed in the lock ${join(tmp.dir, 'p.lock.json')}; a locked file is never overwritten, not even with --force: write the new version elsewhere (a new --out or --out-dir), or delete the earlier run's outputs together with the lock ${join(tmp.dir, 'p.lock.json')} (nothing written) [output_locked]\n`);
    const input = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', 'draft.json', '--policy', 'policy.json', '--out', 'p2.json', '--capture-out', 'draft.json']);
    expect(input.code).toBe(2);
    const v2 = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', 'draft.json', '--policy', 'policy.json', '--out', 'p.v2.json']);
    expect(v2.code).toBe(0);
    expect(v2.out.trimEnd().split('\n').slice(-3)).toEqual(['wrote p.v2.json', 'wrote p.v2.ledger.jsonl', 'wrote p.v2.lock.json']);
  });

  it('lockedPaths lists every file of the folder\'s loretrace locks and the locks themselves', async () => {
    const listed = await lockedPaths(tmp.dir);
    for (const f of ['p.json', 'p.ledger.jsonl', 'c.json', 'draft.json', 'policy.json', 'p.lock.json', 'p.v2.json', 'p.v2.ledger.jsonl', 'p.v2.lock.json']) expect(listed.has(join(tmp.dir, f))).toBe(true);
    expect(listed.get(join(tmp.dir, 'c.json'))).toBe(join(tmp.dir, 'p.lock.json'));
  });
});

describe('findLockFor', () => {
  it('finds the lock that lists a file as an output: its own <name>.lock.json first, else the folder\'s lock of the run', async () => {
    expect(await findLockFor('c.json', tmp.dir)).toBe('p.lock.json');
    expect(await findLockFor('p.ledger.jsonl', tmp.dir)).toBe('p.lock.json');
    expect(await findLockFor(join(tmp.dir, 'p.v2.json'))).toBe(join(tmp.dir, 'p.v2.lock.json'));
    // An input of the run (draft.json) is listed, but not as an output: no lock of its own.
    expect(await findLockFor('draft.json', tmp.dir)).toBeNull();
    expect(await findLockFor('absent/x.json', tmp.dir)).toBeNull();
    const own = tempDir('loretrace-own-lock-');
    try {
      writeFileSync(join(own.dir, 'x.lock.json'), 'not json');
      expect(await findLockFor('x.json', own.dir)).toBe('x.lock.json');
    } finally {
      own.cleanup();
    }
  });
});

describe('loretrace lock verify', () => {
  it("says a lock of another vault is of another vault, not a drifted snapshot", async () => {
    const other = join(FIXTURES, 'MarkdownLore');
    const r = await run(['lock', 'verify', 'p.lock.json', '--lore', other, '--index-dir', join(tmp.dir, 'other-index'), '--json', '--integrity-only']);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out).locks[0];
    expect(report.snapshot).toEqual({ disposition: 'other_vault', recorded: snapshot, current: null, namespace: 'FixtureLore', current_namespace: 'MarkdownLore' });
    expect([report.verdict, report.integrity_ok]).toEqual(['integrity_only', true]);
    const text = await run(['lock', 'verify', 'p.lock.json', '--lore', other, '--index-dir', join(tmp.dir, 'other-index')]);
    expect(text.out).toContain("  snapshot other_vault (the lock is of vault FixtureLore, --lore is MarkdownLore: not compared; pass the lock's own vault)\n");
    expect(text.out).toContain('snapshot_other_vault 1');
  });

  it('reports every file unchanged and the snapshot unchanged (with --lore), totals with zeros; its unsigned ledger, unchecked, makes it UNAUTHENTICATED (exit 1)', async () => {
    const r = await run(['lock', 'verify', 'p.lock.json', '--lore', FIXTURE_VAULT]);
    expect(r.err).toBe('');
    expect(r.code).toBe(1);
    expect(r.out).toBe([
      'lock p.lock.json (retrieve, ready_for_next_role): UNAUTHENTICATED — files and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger',
      '  unchanged output p.json',
      '  unchanged output p.ledger.jsonl',
      '  unchanged output c.json',
      '  unchanged input  draft.json',
      '  unchanged input  policy.json',
      `  snapshot unchanged (recorded ${snapshot.slice(0, 12)}, vault now ${snapshot.slice(0, 12)})`,
      "  authorship not checked (no --trust-key): who signed the ledger is unknown (the lock's claim of no signer is unverified)",
      '  files: unchanged 5, changed 0, missing 0',
      'totals: 1 lock, ok 0, integrity_only 1, drift 0, unreadable 0, files_unchanged 5, files_changed 0, files_missing 0, snapshot_unchanged 1, snapshot_changed 0, snapshot_not_checked 0, snapshot_other_vault 0, snapshot_not_recorded 0, authorship_failed 0',
      '',
    ].join('\n'));
  });

  it('without --lore the snapshot is not_checked', async () => {
    const r = await run(['lock', 'verify', 'p.lock.json', '--json', '--integrity-only']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).locks[0].snapshot).toEqual({ disposition: 'not_checked', recorded: snapshot, current: null, namespace: 'FixtureLore', current_namespace: null });
  });

  it('reports a swapped packet file as changed (exit 1) and a deleted one as missing, with exact values', async () => {
    const dir = join(tmp.dir, 'swap');
    mkdirSync(dir);
    for (const f of ['p.json', 'p.ledger.jsonl', 'c.json', 'draft.json', 'policy.json', 'p.lock.json']) copyFileSync(join(tmp.dir, f), join(dir, f));
    const before = sha(readFileSync(join(dir, 'p.json')));
    writeFileSync(join(dir, 'p.json'), read(PROXY_PACKET));
    rmSync(join(dir, 'policy.json'));
    const r = await run(['lock', 'verify', 'swap/p.lock.json', '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out).locks[0];
    expect(report.ok).toBe(false);
    expect(report.totals).toEqual({ unchanged: 3, changed: 1, missing: 1 });
    expect(report.files[0]).toEqual({
      path: 'p.json', role: 'output', disposition: 'changed', expected_sha256: before, actual_sha256: sha(readFileSync(PROXY_PACKET)),
      detail: `p.json has sha256 ${sha(readFileSync(PROXY_PACKET))}, the lock recorded ${before}: the output changed after the run (write a new version instead)`,
    });
    expect(report.files[4]).toEqual({ path: 'policy.json', role: 'input', disposition: 'missing', expected_sha256: sha(readFileSync(POLICY)), actual_sha256: null, detail: 'policy.json cannot be read (listed as input)' });
  });

  it('reports a listed file that is now a FIFO or a folder as changed ("not a regular file") at once, never blocking on it', async () => {
    const dir = join(tmp.dir, 'fifo');
    mkdirSync(dir);
    for (const f of ['p.json', 'p.ledger.jsonl', 'c.json', 'draft.json', 'policy.json', 'p.lock.json']) copyFileSync(join(tmp.dir, f), join(dir, f));
    rmSync(join(dir, 'c.json'));
    execFileSync('mkfifo', [join(dir, 'c.json')]);
    rmSync(join(dir, 'policy.json'));
    mkdirSync(join(dir, 'policy.json'));
    const r = await run(['lock', 'verify', 'fifo/p.lock.json', '--json']);
    expect(r.code).toBe(1);
    const report = JSON.parse(r.out).locks[0];
    expect(report.totals).toEqual({ unchanged: 3, changed: 2, missing: 0 });
    const fifo = report.files.find((f: { path: string }) => f.path === 'c.json');
    expect(fifo).toMatchObject({ disposition: 'changed', actual_sha256: null, detail: `c.json is not a regular file (a FIFO, device or folder now stands where the ${fifo.role} was): it was not read` });
    expect(report.files.find((f: { path: string }) => f.path === 'policy.json')).toMatchObject({ disposition: 'changed', actual_sha256: null, detail: 'policy.json is not a regular file (a FIFO, device or folder now stands where the input was): it was not read' });
    rmSync(dir, { recursive: true }); // the folder-scan tests below count the locks under tmp.dir
  });

  it('reports a changed vault snapshot', async () => {
    const vault = join(tmp.dir, 'vault-copy');
    cpSync(FIXTURE_VAULT, vault, { recursive: true });
    writeFileSync(join(vault, 'World', 'Politics', 'Salvage Law.md'), `${read(join(FIXTURE_VAULT, 'World', 'Politics', 'Salvage Law.md'))}\nAn edit after the run.\n`);
    const r = await run(['lock', 'verify', 'p.lock.json', '--lore', vault, '--namespace', 'FixtureLore', '--index-dir', join(tmp.dir, 'index-copy'), '--json']);
    expect(r.code).toBe(1);
    const s = JSON.parse(r.out).locks[0].snapshot;
    expect(s.disposition).toBe('changed');
    expect(s.recorded).toBe(snapshot);
    expect(s.current).not.toBe(snapshot);
    rmSync(vault, { recursive: true, force: true });
  });

  it('takes many locks and folders in one call with one report', async () => {
    const r = await run(['lock', 'verify', 'p.lock.json', 'p.v2.lock.json', '--json', '--integrity-only']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).totals).toEqual({ locks: 2, ok: 0, integrity_only: 2, drift: 0, unreadable: 0, files_unchanged: 9, files_changed: 0, files_missing: 0, snapshot_unchanged: 0, snapshot_changed: 0, snapshot_not_checked: 2, snapshot_other_vault: 0, snapshot_not_recorded: 0, authorship_failed: 0 });
    const folder = await run(['lock', 'verify', 'swap', '.', '--json']);
    expect(folder.code).toBe(1);
    const totals = JSON.parse(folder.out).totals;
    // `.` holds swap/ too: each lock is reported once.
    expect(JSON.parse(folder.out).locks.map((l: { file: string; verdict: string }) => [l.file, l.verdict])).toEqual([['swap/p.lock.json', 'failed'], ['./p.lock.json', 'integrity_only'], ['./p.v2.lock.json', 'integrity_only']]);
    expect([totals.locks, totals.ok, totals.integrity_only, totals.drift, totals.files_changed, totals.files_missing]).toEqual([3, 0, 2, 1, 1, 1]);
  });

  it('says not_recorded for a lock that records no snapshot, even when a vault is given', async () => {
    const lockPath = join(tmp.dir, 'nosnap.lock.json');
    const lock = buildLock({ lockPath, status: 'ready_for_next_role', command: 'capture', files: [{ abs: join(tmp.dir, 'mara.raw.json'), role: 'input', content: readFileSync(MARA_RAW) }], snapshot: null, policyReceipt: null, ledger: null, traceBindings: [] });
    const report = await verifyLock(JSON.stringify(lock), lockPath, { currentSnapshot: snapshot });
    expect(report.snapshot).toEqual({ disposition: 'not_recorded', recorded: null, current: snapshot, namespace: null, current_namespace: null });
    expect(report.totals).toEqual({ unchanged: 1, changed: 0, missing: 0 });
    expect(report.ok).toBe(true);
  });

  it('reports a bad lock in a folder as that one lock\'s failure, verifies the others, and counts it in the totals', async () => {
    const dir = join(tmp.dir, 'onebad');
    mkdirSync(dir);
    for (const f of ['p.json', 'p.ledger.jsonl', 'c.json', 'draft.json', 'policy.json', 'p.lock.json']) copyFileSync(join(tmp.dir, f), join(dir, f));
    writeFileSync(join(dir, 'a.lock.json'), '{"schema_version":"0.1","files":[]}\n');
    writeFileSync(join(dir, 'b.lock.json'), '{"schema_version":');
    const r = await run(['lock', 'verify', 'onebad', '--json']);
    expect(r.code).toBe(1);
    const out = JSON.parse(r.out);
    expect(out.locks.map((l: { file: string; ok: boolean; error?: { code: string } }) => [l.file, l.ok, l.error?.code ?? null])).toEqual([
      ['onebad/a.lock.json', false, 'bad_lock'], ['onebad/b.lock.json', false, 'bad_json'], ['onebad/p.lock.json', false, null],
    ]);
    expect(out.locks[1].error.message).toBe('onebad/b.lock.json is not JSON: unexpected end of input at line 1, column 19');
    expect(out.totals).toEqual({ locks: 3, ok: 0, integrity_only: 1, drift: 0, unreadable: 2, files_unchanged: 5, files_changed: 0, files_missing: 0, snapshot_unchanged: 0, snapshot_changed: 0, snapshot_not_checked: 1, snapshot_other_vault: 0, snapshot_not_recorded: 0, authorship_failed: 0 });
    const text = await run(['lock', 'verify', 'onebad']);
    expect(text.code).toBe(1);
    expect(text.out.split('\n').filter((l) => l.startsWith('lock ') || l.startsWith('totals:'))).toEqual([
      "lock onebad/a.lock.json: UNREADABLE — onebad/a.lock.json is not a loretrace lock: / must have required property 'status' [bad_lock]",
      'lock onebad/b.lock.json: UNREADABLE — onebad/b.lock.json is not JSON: unexpected end of input at line 1, column 19 [bad_json]',
      'lock onebad/p.lock.json (retrieve, ready_for_next_role): UNAUTHENTICATED — files and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger',
      'totals: 3 locks, ok 0, integrity_only 1, drift 0, unreadable 2, files_unchanged 5, files_changed 0, files_missing 0, snapshot_unchanged 0, snapshot_changed 0, snapshot_not_checked 1, snapshot_other_vault 0, snapshot_not_recorded 0, authorship_failed 0',
    ]);
    rmSync(dir, { recursive: true }); // the folder-scan tests count the locks under tmp.dir
  });

  it('refuses a file that is not a lock, naming the pointer', async () => {
    writeFileSync(join(tmp.dir, 'not-a.lock.json'), '{"schema_version":"0.1","files":[]}\n');
    await expect(verifyLock(read(join(tmp.dir, 'not-a.lock.json')), join(tmp.dir, 'not-a.lock.json'))).rejects.toMatchObject({ code: 'bad_lock', details: { pointer: '' } });
    rmSync(join(tmp.dir, 'not-a.lock.json'));
  });
});

describe('ledger export writes a lock with the ledger head', () => {
  it('binds the fragment to the ledger file, its head and the trace entries', async () => {
    const s = await fixtureSession({ ledgerPath: join(tmp.dir, 'session.jsonl'), clock: fakeClock() });
    await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
    await s.close();
    const r = await run(['ledger', 'export', 'session.jsonl', '--lore', FIXTURE_VAULT, '--out', 'session.lore_access.json']);
    expect(r.code).toBe(0);
    const fragment = JSON.parse(read(join(tmp.dir, 'session.lore_access.json')));
    const lock = JSON.parse(read(join(tmp.dir, 'session.lore_access.lock.json')));
    expect(outputSchema('lock')(lock)).toBe(true);
    expect(lock.command).toBe('ledger export');
    expect(lock.files.map((f: { path: string; role: string }) => [f.path, f.role])).toEqual([['session.lore_access.json', 'output'], ['session.jsonl', 'input']]);
    expect(lock.ledger).toEqual({ path: 'session.jsonl', head: fragment.ledger_head, records: 4, closed: true });
    // The full binding (seed 004): the ledger record that served the range, its hash, the ledger head and id, the snapshot and the served text's hash.
    const ledgerLines = read(join(tmp.dir, 'session.jsonl')).trim().split('\n').map((l) => JSON.parse(l));
    // seq 2: the TOOL_RESULT that served the text (seq 1 is its TOOL_CALL).
    const served = ledgerLines.find((rec: { seq: number }) => rec.seq === 2);
    expect(served.kind).toBe('TOOL_RESULT');
    expect(lock.trace_bindings).toEqual([{
      trace_id: fragment.research_trace[0].trace_id, source_ref: `${R.territories}#chunk1`, line_start: 5, line_end: 8, ledger_backed: true,
      ledger_head: fragment.ledger_head, ledger_id: served.ledger_id, piece: 0, record_hash: served.record_hash, record_id: `${served.ledger_id}:2`, seq: 2,
      snapshot_id: snapshot, text_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
    }]);
    expect(fragment.research_trace[0].trace_id).toBe(`${served.ledger_id}:2:${served.record_hash.slice(0, fragment.research_trace[0].trace_id.split(':')[2].length)}`);
    expect(lock.snapshot).toEqual({ namespace: 'FixtureLore', snapshot_id: snapshot });
  });
});

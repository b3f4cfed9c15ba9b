/**
 * The coordinator lane's receipts end to end on the bundled FixtureLore files: `retrieve` writes its own
 * hash-chained ledger beside the packet (`<out>.ledger.jsonl`), `capture --ledger` assembles a capture from
 * it whose runner_captured entries are ledger-backed, and `verify-trace`, `capture check` and `lock verify`
 * agree — then fail for a ledger cut at a record boundary (pinned by the capture's lock, no --head), an
 * edited ledger and a packet swapped after the run. The capture is validated with Ghostlight's original
 * schema when ../shared is present.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { main } from '../src/cli/main.js';
import { TRACE_DISPOSITIONS } from '../src/receipts/verify-trace.js';
import type { TraceDisposition } from '../src/receipts/verify-trace.js';
import { writeTestKey } from './helpers/keys.js';
import { runCliIn } from './helpers/cli.js';
import { tempDir } from './helpers/proxy.js';
import { FIXTURES, FIXTURE_VAULT, GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';

const PACKETS = join(FIXTURES, 'packets');
const MARA_RAW = join(FIXTURES, 'captures', 'mara-voss.turn-01.raw.json');
const F = (p: string) => `FixtureLore:World/${p}`;
const read = (f: string): string => readFileSync(f, 'utf8');
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
/** Every disposition at zero but those given (seed 003: zeros included). */
const totals = (some: Partial<Record<TraceDisposition, number>>) => Object.fromEntries(TRACE_DISPOSITIONS.map((d) => [d, some[d] ?? 0]));
/** The three excerpts retrieve takes for the Mara draft with its projected context (see tests/retrieve.test.ts). */
const MARA_TRACE = [
  [F('Pre-Elysium/Timeline/Events/Brinefall Blackout.md#chunk1'), 11, 12],
  [F('Pre-Elysium/Factions/Powers/Major/Meridian Compact.md#chunk0'), 7, 7],
  [F('Pre-Elysium/Factions/Movements/Quiet Hands.md#chunk1'), 7, 7],
];

describe('capture --ledger on the ledger retrieve wrote (coordinator lane, FixtureLore)', () => {
  let tmp: { dir: string; cleanup: () => void };
  const at = (f: string) => join(tmp.dir, f);
  const json = (f: string) => JSON.parse(read(at(f)));

  const run = (argv: string[]) => runCliIn(tmp.dir, argv);
  const capture = (ledger: string, out: string, packet = 'mara.packet.json') => run([
    'capture', '--lore', FIXTURE_VAULT, '--packet', packet, '--raw-output', 'mara.raw.json', '--ledger', ledger,
    '--out', out, '--model-family', 'fixture responder', '--reviewer', 'Ghostlight maintainer',
  ]);

  beforeAll(async () => {
    tmp = tempDir('loretrace-capture-retrieve-');
    copyFileSync(MARA_RAW, at('mara.raw.json'));
    const r = await run([
      'retrieve', '--lore', FIXTURE_VAULT, '--packet', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'),
      '--projected-context', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'),
      '--policy', join(PACKETS, 'brinefall-intake.policy.json'), '--out', 'mara.packet.json', '--capture-out', 'mara.lore_access.json',
    ]);
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
  });
  afterAll(() => tmp?.cleanup());

  it('the ledger pins the packet retrieve wrote (its id, the sha256 of its bytes) and lists every note the walk consulted or followed', () => {
    const first = JSON.parse(read(at('mara.packet.ledger.jsonl')).split('\n')[0]!);
    const packet = json('mara.packet.json');
    const fragment = json('mara.lore_access.json');
    expect(first.kind).toBe('SESSION_OPENED');
    expect(first.session).toMatchObject({
      runner: 'retrieve', mode: 'coordinator_scoped_retrieval', packet_id: 'brinefall-intake.turn-01.mara-voss.packet.loretrace-coordinator.v1',
      packet_sha256: sha256(readFileSync(at('mara.packet.json'))), packet_file: 'mara.packet.json',
      required_seeds: [{ ref: F('Pre-Elysium/Timeline/Events/Brinefall Blackout.md'), path: 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md' }],
    });
    expect(packet.packet_id).toBe(first.session.packet_id);
    expect(first.session.admitted.map((a: { ref: string; via: string }) => [a.ref, a.via])).toEqual([
      ...fragment.consulted_refs.map((r: string) => [r, 'seed']),
      ...fragment.followed_refs.map((r: string) => [r, 'follow']),
    ]);
    expect(fragment.followed_refs).toEqual([
      F('Pre-Elysium/Factions/Powers/Major/Meridian Compact.md'), F('Pre-Elysium/Factions/Movements/Quiet Hands.md'),
      F('Pre-Elysium/Timeline/Events/Kestrel Route Accord.md'),
    ]);
  });

  it('assembles a capture whose lore_access is the fragment retrieve wrote, every entry ledger-backed and verified: draft, its unsigned ledger\'s authorship not checked', async () => {
    const r = await capture('mara.packet.ledger.jsonl', 'mara.capture.json');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[0]).toBe('capture: brinefall-intake.turn-01.mara-voss.packet.loretrace-coordinator.v1.capture (coordinator_scoped_retrieval) review_status draft');
    expect(lines[2]).toMatch(/^ {2}receipts: ledger mara\.packet\.ledger\.jsonl — verifies, 14 records, closed; head [0-9a-f]{64}$/);
    expect(lines[3]).toBe('  authorship not checked (no --trust-key); the ledger is unsigned');
    expect(lines[4]).toBe(`  research_trace: 3 runner_captured entries, 0 failed (${Object.entries(totals({ verified: 3 })).map(([k, v]) => `${k} ${v}`).join(', ')})`);
    const c = json('mara.capture.json');
    const fragment = json('mara.lore_access.json');
    expect(c.lore_access.research_trace).toEqual(fragment.research_trace);
    expect(c.lore_access.consulted_refs).toEqual(fragment.consulted_refs);
    expect(c.lore_access.followed_refs).toEqual(fragment.followed_refs);
    expect(c.lore_access.research_trace.map((t: { source_ref: string; line_start: number; line_end: number }) => [t.source_ref, t.line_start, t.line_end])).toEqual(MARA_TRACE);
    expect(c.coordinator_review.failure_labels).toEqual(['ledger_authorship_not_checked']);
    expect(c.coordinator_review.accepted_for_training).toBe(false);
    expect(c.coordinator_review.review_notes).toContain('Required seeds: all 1 read.');
    const lock = json('mara.capture.lock.json');
    const head = JSON.parse(read(at('mara.packet.ledger.jsonl')).trim().split('\n').at(-1)!).record_hash;
    expect(fragment.ledger_head).toBe(head);
    expect(lock.ledger).toEqual({ path: 'mara.packet.ledger.jsonl', head, records: 14, closed: true, signer_key_id: null });
    expect(lock.trace_bindings.map((b: { trace_id: string; disposition: string; ledger_backed: boolean }) => [b.trace_id, b.disposition, b.ledger_backed]))
      .toEqual(fragment.research_trace.map((t: { trace_id: string }) => [t.trace_id, 'verified', true]));
  });

  it('verify-trace: the capture with retrieve\'s ledger and the capture\'s lock — intact, pinned by the lock, 3 ledger-backed; without the ledger every entry is unbacked', async () => {
    const v = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--ledger', 'mara.packet.ledger.jsonl', '--lock', 'mara.capture.lock.json', '--json']);
    expect(v.code).toBe(1);
    const report = JSON.parse(v.out);
    expect(report).toMatchObject({ input_kind: 'capture', research_trace_status: 'runner_captured', verdict: 'integrity_only', ok: false, integrity_ok: true, draft: false, runner_captured: { checked: 3, failed: 0, ledger_backed: 3 } });
    expect(report.totals).toEqual(totals({ verified: 3 }));
    expect(report.ledgers.map((l: { disposition: string; closed: boolean; records: number; pin_source: string }) => [l.disposition, l.closed, l.records, l.pin_source])).toEqual([['intact', true, 14, 'lock mara.capture.lock.json']]);
    copyFileSync(at('mara.capture.json'), at('lone.capture.json'));
    const bare = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'lone.capture.json', '--json']);
    expect(bare.code).toBe(1);
    expect(JSON.parse(bare.out).totals).toEqual(totals({ unbacked: 3 }));
    expect(JSON.parse(bare.out).found_locks).toBeUndefined();
  });

  it('verify-trace without --ledger/--lock finds the lock that lists its input (the rule capture check uses) and names it', async () => {
    const frag = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json']);
    expect(frag.code).toBe(1);
    const lines = frag.out.split('\n');
    expect(lines[1]).toBe('  lock: mara.packet.lock.json lists mara.lore_access.json as an output; its ledger mara.packet.ledger.jsonl is used (no --ledger, --lock or --head given)');
    expect(lines.find((l) => l.startsWith('  ledger: '))).toMatch(/^  ledger: intact {12}mara\.packet\.ledger\.jsonl lt-[0-9a-f]{16} \(14 records, head pinned by lock mara\.packet\.lock\.json\)$/);
    expect(lines.at(-2)).toBe('runner_captured: 3 entries: 3 ledger-backed and verified, 0 failed — UNAUTHENTICATED — chain and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger');
    const cap = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--json', '--integrity-only']);
    expect(cap.code).toBe(0);
    const report = JSON.parse(cap.out);
    expect(report.found_locks).toEqual([{ file: 'mara.capture.json', lock: 'mara.capture.lock.json', ledger: 'mara.packet.ledger.jsonl' }]);
    expect(report.totals).toEqual(totals({ verified: 3 }));
    const explicit = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json', '--ledger', 'mara.packet.ledger.jsonl', '--json']);
    expect(JSON.parse(explicit.out).found_locks).toBeUndefined();
    // The ledger of a found lock is held to --trust-key like a named one: retrieve ran unsigned here.
    const key = writeTestKey(tmp.dir, 1);
    const trusted = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--trust-key', key.publicPath, '--json']);
    expect(trusted.code).toBe(1);
    const held = JSON.parse(trusted.out);
    expect(held.found_locks).toEqual([{ file: 'mara.capture.json', lock: 'mara.capture.lock.json', ledger: 'mara.packet.ledger.jsonl' }]);
    expect(held.ledgers.map((l: { disposition: string }) => l.disposition)).toEqual(['ledger_unsigned']);
    expect(held.totals).toEqual(totals({ ledger_untrusted: 3, ledger_unsigned: 1 }));
  });

  it('verify-trace holds its input to the lock it found: a fragment re-saved after the run is input_file changed (DRIFT), exit 1, as lock verify reports it', async () => {
    const original = read(at('mara.lore_access.json'));
    const locked = sha256(original);
    try {
      const resaved = JSON.stringify(JSON.parse(original)) + '\n';
      writeFileSync(at('mara.lore_access.json'), resaved);
      const v = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json']);
      expect(v.code).toBe(1);
      const lines = v.out.split('\n');
      expect(lines[1]).toBe('  lock: mara.packet.lock.json lists mara.lore_access.json as an output; its ledger mara.packet.ledger.jsonl is used (no --ledger, --lock or --head given)');
      expect(lines).toContain(`  input: DRIFT              mara.lore_access.json has sha256 ${sha256(resaved)}, lock mara.packet.lock.json records ${locked}: the output changed after the run (write a new version instead)`);
      expect(lines.at(-2)).toBe('runner_captured: 3 entries: 3 ledger-backed and verified, 0 failed; session: input_file changed — FAILED');
      const j = JSON.parse((await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json', '--json'])).out);
      expect(j.ok).toBe(false);
      expect(j.totals).toEqual(totals({ verified: 3 }));
      expect(j.input_file).toEqual({ file: 'mara.lore_access.json', source: 'lock mara.packet.lock.json', locked_sha256: locked, sha256: sha256(resaved), disposition: 'changed' });
    } finally {
      writeFileSync(at('mara.lore_access.json'), original);
    }
    const back = JSON.parse((await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json', '--json'])).out);
    expect([back.integrity_ok, back.input_file.disposition]).toEqual([true, 'unchanged']);
  });

  it('verify-trace reports retrieve\'s fragment as a capture_fragment and its raw ledger as a retrieve_ledger', async () => {
    const v = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json', 'mara.packet.ledger.jsonl', '--json', '--integrity-only']);
    expect(v.code).toBe(0);
    const set = JSON.parse(v.out);
    expect(set.files.map((f: { file: string; report: { input_kind: string; verdict: string; totals: Record<string, number> } }) => [f.file, f.report.input_kind, f.report.verdict, f.report.totals.verified]))
      .toEqual([['mara.lore_access.json', 'capture_fragment', 'integrity_only', 3], ['mara.packet.ledger.jsonl', 'retrieve_ledger', 'integrity_only', 3]]);
    expect(set.verdict).toBe('integrity_only');
  });

  it('capture check finds the ledger through the lock and passes it as integrity only; lock verify passes both locks of the run likewise', async () => {
    const check = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--json']);
    expect(check.code).toBe(1);
    const report = JSON.parse(check.out);
    expect(report.totals).toEqual({ captures: 1, ok: 0, integrity_only: 1, review_unchecked: 0, failed: 0, invalid: 0, trace_failed: 0, lock_drift: 0, review_mismatch: 0, unreadable: 0 });
    expect(report.captures[0].verdict).toBe('integrity_only');
    expect((await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--integrity-only'])).code).toBe(0);
    expect(report.captures[0].trace.runner_captured).toEqual({ checked: 3, failed: 0, ledger_backed: 3 });
    const locks = await run(['lock', 'verify', 'mara.packet.lock.json', 'mara.capture.lock.json', '--lore', FIXTURE_VAULT, '--json', '--integrity-only']);
    expect(locks.code).toBe(0);
    const t = JSON.parse(locks.out).totals;
    expect([t.locks, t.ok, t.integrity_only, t.drift, t.files_unchanged, t.files_changed, t.files_missing, t.snapshot_unchanged]).toEqual([2, 0, 2, 0, 10, 0, 0, 2]);
  });

  it('a ledger cut at a record boundary: verify-trace fails it as ledger_broken against the lock\'s pinned head, without --head; a capture from it is a draft (ledger_not_closed)', async () => {
    const lines = read(at('mara.packet.ledger.jsonl')).split('\n').filter((l) => l !== '');
    writeFileSync(at('cut.ledger.jsonl'), lines.slice(0, -1).join('\n') + '\n');
    const v = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--ledger', 'cut.ledger.jsonl', '--lock', 'mara.capture.lock.json', '--json']);
    expect(v.code).toBe(1);
    const report = JSON.parse(v.out);
    // The lock also names the intact ledger; the cut copy is the one that is broken.
    const cut = report.ledgers.find((l: { file: string }) => l.file === 'cut.ledger.jsonl');
    expect(cut).toMatchObject({ disposition: 'ledger_broken', records: 13, closed: false, pin_source: 'lock mara.capture.lock.json' });
    expect(cut.detail).toMatch(/^\[ledger_head_mismatch\] .* \(head pinned by lock mara\.capture\.lock\.json\)$/);
    const alone = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--ledger', 'cut.ledger.jsonl', '--head', JSON.parse(lines.at(-1)!).record_hash, '--json']);
    expect(alone.code).toBe(1);
    expect(JSON.parse(alone.out).totals).toEqual(totals({ ledger_broken: 3 }));
    const unpinned = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.capture.json', '--ledger', 'cut.ledger.jsonl', '--json']);
    expect(JSON.parse(unpinned.out)).toMatchObject({ verdict: 'integrity_only', integrity_ok: true, draft: true, totals: totals({ verified: 3, ledger_not_closed: 1 }) });
    const drafted = await capture('cut.ledger.jsonl', 'cut.capture.json');
    expect(drafted.code).toBe(0);
    const c = json('cut.capture.json');
    expect([c.review_status, c.coordinator_review.failure_labels]).toEqual(['draft', ['ledger_not_closed', 'ledger_authorship_not_checked']]);
  });

  it('a retrieve ledger cut in place after the capture: capture check fails its trace (ledger_broken, the lock pins the head) and its lock (drift)', async () => {
    const r = await capture('mara.packet.ledger.jsonl', 'again.capture.json');
    expect(r.code).toBe(0);
    writeFileSync(at('mara.packet.ledger.jsonl'), read(at('cut.ledger.jsonl')));
    const check = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'again.capture.json', '--json']);
    expect(check.code).toBe(1);
    const report = JSON.parse(check.out);
    expect(report.totals).toEqual({ captures: 1, ok: 0, integrity_only: 0, review_unchecked: 0, failed: 1, invalid: 0, trace_failed: 1, lock_drift: 1, review_mismatch: 1, unreadable: 0 });
    expect(report.captures[0].trace.totals).toEqual(totals({ ledger_broken: 3 }));
    expect(report.captures[0].lock.files.filter((f: { disposition: string }) => f.disposition !== 'unchanged').map((f: { path: string; disposition: string }) => [f.path, f.disposition]))
      .toEqual([['mara.packet.ledger.jsonl', 'changed']]);
  });

  it('an edited retrieve ledger (a read record served other lines, hashes kept) is refused by capture and broken for verify-trace', async () => {
    const lines = read(at('mara.packet.ledger.jsonl')).split('\n');
    // seq 8: the TOOL_RESULT of the first read (seq 7 is its TOOL_CALL).
    expect(JSON.parse(lines[8]!).kind).toBe('TOOL_RESULT');
    lines[8] = lines[8]!.replace('"line_start":11', '"line_start":10');
    writeFileSync(at('edited.ledger.jsonl'), lines.join('\n'));
    const refused = await capture('edited.ledger.jsonl', 'edited.capture.json');
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^loretrace: .*seq 8.* \[ledger_invalid\]\n$/);
    const v = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'mara.lore_access.json', '--ledger', 'edited.ledger.jsonl', '--json']);
    expect(v.code).toBe(1);
    expect(JSON.parse(v.out).ledgers[0]).toMatchObject({ disposition: 'ledger_broken', records: 8 });
  });

  it('refuses retrieve\'s ledger for a packet swapped after the run, naming both hashes', async () => {
    const packet = read(at('mara.packet.json'));
    writeFileSync(at('swapped.packet.json'), packet.replace('"review_status": "draft"', '"review_status": "draft" '));
    const r = await capture('edited.ledger.jsonl', 'swapped.capture.json', 'swapped.packet.json');
    expect(r.code).toBe(1);
    const original = JSON.parse(read(at('cut.ledger.jsonl')).split('\n')[0]!).session.packet_sha256;
    expect(r.err).toBe(`loretrace: ledger edited.ledger.jsonl pins packet sha256 ${original}, but the packet file hashes to ${sha256(read(at('swapped.packet.json')))}: the packet was changed or swapped after the session [lore_source_mismatch]\n`);
  });
});

describe.skipIf(!hasShared)(`the coordinator-lane capture validates with Ghostlight's original schema${hasShared ? '' : ` (${sharedNotice})`}`, () => {
  it('passes ../shared/ghostlight/schemas/responder-output.schema.json', async () => {
    const tmp = tempDir('loretrace-capture-retrieve-schema-');
    try {
      const run = (argv: string[]) => main(argv, { stdout: () => undefined, stderr: () => undefined, cwd: tmp.dir, env: { LORETRACE_INDEX_DIR: join(tmp.dir, 'index') } });
      expect(await run([
        'retrieve', '--lore', FIXTURE_VAULT, '--packet', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'),
        '--projected-context', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'),
        '--policy', join(PACKETS, 'brinefall-intake.policy.json'), '--out', 'p.json',
      ])).toBe(0);
      expect(await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'p.json', '--raw-output', MARA_RAW, '--ledger', 'p.ledger.jsonl', '--out', 'c.json', '--model-family', 'm', '--reviewer', 'r'])).toBe(0);
      const validate = new Ajv2020({ allErrors: true, strict: false }).compile(JSON.parse(read(join(GHOSTLIGHT, 'schemas', 'responder-output.schema.json'))));
      const ok = validate(JSON.parse(read(join(tmp.dir, 'c.json'))));
      expect({ ok, errors: validate.errors ?? null }).toEqual({ ok: true, errors: null });
    } finally {
      tmp.cleanup();
    }
  });
});

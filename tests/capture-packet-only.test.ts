/**
 * `capture check` on packet-only captures that no lock lists (docs/RECEIPTS.md "capture check"): a capture that
 * claims no receipts — `curated_excerpts_only`, no research trace, nothing followed, as Ghostlight ships its own
 * person-reviewed captures — has nothing to re-derive. It is not a failure and never `verified`: its verdict is
 * `review_unchecked` (exit 0; `--require-accepted` refuses its acceptance), its leakage still re-audited from
 * `raw_output` (a leak fails it). One that claims receipts without a lock stays FAILED. On the fixture capture
 * lore-fixtures/captures/packet-only/ and on the four real captures of ../shared (skipped when absent).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliIn } from './helpers/cli.js';
import { packetRefProblem } from '../src/receipts/capture.js';
import { tempDir } from './helpers/proxy.js';
import { AETHERIA, FIXTURES, FIXTURE_VAULT, GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';

const FIXTURE_CAPTURE = join(FIXTURES, 'captures', 'packet-only', 'mara-voss.turn-01.capture.json');

let tmp: { dir: string; cleanup: () => void };
const at = (name: string): string => join(tmp.dir, name);

/** The CLI in-process in the test's folder (tests/helpers/cli.ts). */
const run = (argv: string[]) => runCliIn(tmp.dir, argv);

/** `capture check --json` on one file: the exit code, the capture's verdict fields and the totals. */
async function checkJson(lore: string, file: string, ...extra: string[]) {
  const r = await run(['capture', 'check', '--lore', lore, file, '--json', ...extra]);
  const c = JSON.parse(r.out).captures[0];
  return {
    code: r.code, verdict: c.verdict, ok: c.ok, review: c.review.map((f: { code: string; pointer: string }) => [f.code, f.pointer]),
    unchecked: c.review_unchecked === null ? null : [c.review_unchecked.code, c.review_unchecked.severity, c.review_unchecked.pointer], not_accepted: c.not_accepted, totals: JSON.parse(r.out).totals,
  };
}

/** A copy of the fixture capture in its own folder (no lock), edited. */
function variant(name: string, edit: (c: Record<string, any>) => void): string { // eslint-disable-line @typescript-eslint/no-explicit-any
  const c = JSON.parse(readFileSync(FIXTURE_CAPTURE, 'utf8'));
  edit(c);
  mkdirSync(at(name), { recursive: true });
  writeFileSync(at(`${name}/x.capture.json`), JSON.stringify(c, null, 2) + '\n');
  return `${name}/x.capture.json`;
}

beforeAll(() => {
  tmp = tempDir('loretrace-packet-only-');
});
afterAll(() => tmp?.cleanup());

const UNCHECKED_REASON = 'not accepted: review_status accepted_as_draft was not checked (capture_review_unchecked): it is the reviewer\'s own, with no receipts to re-derive';
const ZERO = { captures: 1, ok: 0, integrity_only: 0, review_unchecked: 0, failed: 0, invalid: 0, trace_failed: 0, lock_drift: 0, review_mismatch: 0, unreadable: 0 };

describe('a packet-only capture no lock lists (fixture)', () => {
  it('claims no receipts: review_unchecked, not ok, exit 0; the report says its review_status is the reviewer\'s own', async () => {
    expect(await checkJson(FIXTURE_VAULT, FIXTURE_CAPTURE)).toEqual({
      code: 0, verdict: 'review_unchecked', ok: false, review: [], unchecked: ['capture_review_unchecked', 'warning', '/review_status'], not_accepted: UNCHECKED_REASON,
      totals: { ...ZERO, review_unchecked: 1 },
    });
    const text = await run(['capture', 'check', '--lore', FIXTURE_VAULT, FIXTURE_CAPTURE]);
    expect([text.code, text.out.split('\n')[0]]).toEqual([0, `${FIXTURE_CAPTURE}: REVIEW NOT CHECKED — every check passed; it claims no receipts and no lock lists its packet, so its review_status is the reviewer's own`]);
    expect(text.out).toContain(`  review: not checked — review_status "accepted_as_draft" is the reviewer's own and was not checked: no lock lists ${FIXTURE_CAPTURE} (neither mara-voss.turn-01.capture.lock.json nor a *.lock.json of its folder), and the capture claims no receipts (lore_access.mode "curated_excerpts_only", no research trace, nothing followed), so there is nothing to re-derive; its leakage was re-audited from raw_output with its isolation.hidden_context_refs and the vault [capture_review_unchecked]\n`);
    expect(text.out.trimEnd().split('\n').at(-1)).toBe('totals: captures 1, ok 0, integrity_only 0, review_unchecked 1, failed 0, invalid 0, trace_failed 0, lock_drift 0, review_mismatch 0, unreadable 0');
  });

  it('--require-accepted refuses the acceptance it could not uphold: FAILED, counted once as failed, exit 1', async () => {
    expect(await checkJson(FIXTURE_VAULT, FIXTURE_CAPTURE, '--require-accepted')).toEqual({
      code: 1, verdict: 'failed', ok: false, review: [], unchecked: ['capture_review_unchecked', 'warning', '/review_status'],
      not_accepted: UNCHECKED_REASON,
      totals: { ...ZERO, failed: 1, not_accepted: 1 },
    });
    const text = await run(['capture', 'check', '--lore', FIXTURE_VAULT, FIXTURE_CAPTURE, '--require-accepted']);
    expect(text.out.split('\n').slice(0, 2)).toEqual([`${FIXTURE_CAPTURE}: FAILED`,
      '  not accepted: review_status accepted_as_draft was not checked (capture_review_unchecked): it is the reviewer\'s own, with no receipts to re-derive — FAILED (--require-accepted)']);
  });

  it('a leak in its raw_output with the flag left false still fails: capture_review_mismatch, exit 1', async () => {
    const file = variant('leak', (c) => {
      const p = JSON.parse(c.raw_output);
      p.spoken_text = 'Truth is, the blackout was staged by relay keepers paid to sink a rival convoy. No character in the harbor era knows this.';
      c.raw_output = JSON.stringify(p, null, 2);
      c.parsed_output = p;
    });
    expect(await checkJson(FIXTURE_VAULT, file)).toEqual({
      code: 1, verdict: 'failed', ok: false, review: [['capture_review_mismatch', '/leakage_audit/author_only_leak']], unchecked: ['capture_review_unchecked', 'warning', '/review_status'], not_accepted: 'not accepted: review_status accepted_as_draft is not upheld by the receipts (capture_review_mismatch)',
      totals: { ...ZERO, failed: 1, review_mismatch: 1 },
    });
  });

  it('one that claims receipts (runner_captured, a followed ref) with no lock stays FAILED: capture_review_not_rederived', async () => {
    const file = variant('claims', (c) => {
      c.lore_access.research_trace_status = 'runner_captured';
      c.lore_access.followed_refs = ['FixtureLore:World/Pre-Elysium/Territories.md'];
    });
    const r = await checkJson(FIXTURE_VAULT, file);
    expect([r.code, r.verdict, r.unchecked, r.review]).toEqual([1, 'failed', null, [
      ['research_trace_empty', '/lore_access/research_trace'], ['capture_review_not_rederived', '/review_status'],
      ['claimed_not_read', '/lore_access/consulted_refs/0'], ['claimed_not_read', '/lore_access/consulted_refs/1'], ['claimed_not_read', '/lore_access/followed_refs/0'],
    ]]);
  });
});

describe.skipIf(!hasShared)(`the real Ghostlight captures (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  const CAPTURES = join(GHOSTLIGHT, 'captures');
  const NARA = join(CAPTURES, 'pallas-training-loop-v0.turn-01.nara-7.packet.capture.json');

  it('each claims no receipts: the Pallas two review_unchecked (exit 0), the Lucent two FAILED only by their schema (raw_output_exact)', async () => {
    for (const name of ['pallas-training-loop-v0.turn-01.nara-7', 'pallas-training-loop-v0.turn-02.ilya-marne']) {
      expect(await checkJson(AETHERIA, join(CAPTURES, `${name}.packet.capture.json`))).toEqual({
        code: 0, verdict: 'review_unchecked', ok: false, review: [], unchecked: ['capture_review_unchecked', 'warning', '/review_status'], not_accepted: UNCHECKED_REASON, totals: { ...ZERO, review_unchecked: 1 },
      });
    }
    for (const name of ['lucent-hostage-feed-v0.turn-06.sol-vant', 'lucent-hostage-feed-v0.turn-14.sol-vant']) {
      expect(await checkJson(AETHERIA, join(CAPTURES, `${name}.packet.capture.json`))).toEqual({
        code: 1, verdict: 'failed', ok: false, review: [], unchecked: ['capture_review_unchecked', 'warning', '/review_status'], not_accepted: UNCHECKED_REASON, totals: { ...ZERO, failed: 1, invalid: 1 },
      });
    }
    const all = await run(['capture', 'check', '--lore', AETHERIA, CAPTURES]);
    expect([all.code, all.out.trimEnd().split('\n').at(-1)]).toEqual([1, 'totals: captures 4, ok 0, integrity_only 0, review_unchecked 2, failed 2, invalid 2, trace_failed 0, lock_drift 0, review_mismatch 0, unreadable 0']);
  });

  it('each names its own packet: packet_ref and visible_input_ref are Ghostlight repository paths (examples/responder-packets/<file>) whose file is the packet\'s, so packetRefProblem finds nothing; another packet\'s file is named', () => {
    const packets = join(GHOSTLIGHT, 'packets');
    const names = readdirSync(CAPTURES).filter((f) => f.endsWith('.capture.json')).sort();
    expect(names).toHaveLength(4);
    for (const name of names) {
      const c = JSON.parse(readFileSync(join(CAPTURES, name), 'utf8'));
      const packetFile = join(packets, name.replace(/\.capture\.json$/, '.json'));
      const packetId = JSON.parse(readFileSync(packetFile, 'utf8')).packet_id as string;
      expect([c.packet_ref, c.isolation.visible_input_ref]).toEqual([`examples/responder-packets/${basename(packetFile)}`, `examples/responder-packets/${basename(packetFile)}`]);
      expect([c.capture_id, packetRefProblem(c.packet_ref, packetFile, packetId), packetRefProblem(c.isolation.visible_input_ref, packetFile, packetId)]).toEqual([`${packetId}.capture`, null, null]);
    }
    const nara = JSON.parse(readFileSync(NARA, 'utf8'));
    expect(packetRefProblem(nara.packet_ref, join(packets, 'pallas-training-loop-v0.turn-02.ilya-marne.packet.json'), 'pallas-training-loop-v0.turn-02.ilya-marne.packet')).toBe('the file pallas-training-loop-v0.turn-01.nara-7.packet.json');
  });

  it('Nara-7: REVIEW NOT CHECKED, exit 0; --require-accepted exit 1', async () => {
    const r = await run(['capture', 'check', NARA, '--lore', AETHERIA]);
    expect([r.code, r.out.split('\n')[0]]).toEqual([0, `${NARA}: REVIEW NOT CHECKED — every check passed; it claims no receipts and no lock lists its packet, so its review_status is the reviewer's own`]);
    expect((await run(['capture', 'check', NARA, '--lore', AETHERIA, '--require-accepted'])).code).toBe(1);
  });
});

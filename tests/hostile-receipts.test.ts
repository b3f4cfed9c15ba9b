/**
 * Receipt forgeries (docs/RECEIPTS.md "What a lock binds" and "capture check"): a capture or packet edited
 * after a ledger-backed run, its entry in the lock re-hashed as a forger with write access would, must fail
 * `capture check` and `lock verify` — a promoted leak whose lock lost the packet's entry or whose
 * `packet_ref` was respelled, a swapped raw output, a packet edited after `retrieve`; and a hand-made research
 * capture with no lock at all, or with every runner_captured entry dropped, which `capture check --require-accepted`
 * must not accept; and `verify-trace` with no key at all on a runner_captured capture holding no runner_captured
 * entry beside an invented reconstruction or a verbatim quote of the packet's omitted note, which must fail
 * (`no_runner_captured_entries`, `unbacked`, `policy_violation`) — a trace nothing backs is never `ok`.
 * Built in a temp dir from lore-fixtures only.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { fakeClock, fixtureSession, PROXY_PACKET, R, tempDir } from './helpers/proxy.js';
import { FIXTURES, FIXTURE_VAULT } from './helpers/shared.js';
import { generateRunnerKey, readSigningKey } from '../src/receipts/signing.js';

const PACKETS = join(FIXTURES, 'packets');
const ILSE_RAW = join(FIXTURES, 'captures', 'dock-warden-ilse.research.raw.json');
const MARA_RAW = join(FIXTURES, 'captures', 'mara-voss.turn-01.raw.json');
const read = (f: string): string => readFileSync(f, 'utf8');
const sha256 = (t: string): string => createHash('sha256').update(t).digest('hex');

let tmp: { dir: string; cleanup: () => void };
const at = (name: string): string => join(tmp.dir, name);

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, {
    stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp.dir, 'index') }, cwd: tmp.dir,
    readStdin: async () => Buffer.from('', 'utf8'),
  });
  return { code, out, err };
}

/** Edit a JSON file, then re-hash its entry (and only it) in `lockName`; `dropPacket` also removes the lock's entries ending in that name. */
function forge(name: string, lockName: string, edit: (doc: Record<string, any>) => void, dropPacket?: string): void { // eslint-disable-line @typescript-eslint/no-explicit-any
  const doc = JSON.parse(read(at(name)));
  edit(doc);
  const text = JSON.stringify(doc, null, 2) + '\n';
  writeFileSync(at(name), text);
  const lock = JSON.parse(read(at(lockName)));
  const row = lock.files.find((f: { path: string }) => f.path === name);
  row.sha256 = sha256(text);
  row.bytes = Buffer.byteLength(text);
  if (dropPacket !== undefined) lock.files = lock.files.filter((f: { path: string }) => !f.path.endsWith(dropPacket));
  writeFileSync(at(lockName), JSON.stringify(lock, null, 2) + '\n');
}

/** The promotion of a leaking capture to accepted for training, every leakage flag cleared. */
const promote = (c: Record<string, any>): void => { // eslint-disable-line @typescript-eslint/no-explicit-any
  c.review_status = 'accepted';
  c.coordinator_review.failure_labels = [];
  c.coordinator_review.accepted_for_training = true;
  for (const k of Object.keys(c.leakage_audit)) if (typeof c.leakage_audit[k] === 'boolean') c.leakage_audit[k] = false;
};

const capture = (raw: string, out: string) => run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', raw, '--ledger', 'ilse.jsonl', '--out', out, '--model-family', 't', '--reviewer', 'r', '--trust-key', 'k.pub.pem', '--json']);
const check = async (file: string) => {
  const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, file, '--trust-key', 'k.pub.pem', '--json']);
  const c = JSON.parse(r.out).captures[0];
  return { code: r.code, review: c.review.map((f: { code: string; pointer: string }) => [f.code, f.pointer]), bindings: c.lock.bindings.map((f: { code: string; pointer: string }) => [f.code, f.pointer]) };
};
const lockVerify = async (file: string) => {
  const r = await run(['lock', 'verify', file, '--trust-key', 'k.pub.pem', '--json']);
  return { code: r.code, bindings: JSON.parse(r.out).locks[0].bindings.map((f: { code: string; pointer: string }) => [f.code, f.pointer]) };
};

beforeAll(async () => {
  tmp = tempDir('loretrace-receipt-forgery-');
  copyFileSync(PROXY_PACKET, at('ilse.packet.json'));
  copyFileSync(ILSE_RAW, at('ilse.raw.json'));
  writeFileSync(at('leak.raw.json'), read(ILSE_RAW).replace(/"spoken_text": *"[^"]*"/, '"spoken_text": "I know the Brinefall Truth: the Compact staged the blackout."'));
  const key = generateRunnerKey();
  writeFileSync(at('k.key.pem'), key.private_pem);
  writeFileSync(at('k.pub.pem'), key.public_pem);
  // A signed session checked with its trusted key: the forgeries below hold under a trusted signature.
  const s = await fixtureSession({ ledgerPath: at('ilse.jsonl'), clock: fakeClock(), signer: readSigningKey(key.private_pem, 'k.key.pem') });
  await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
  await s.call('lore_read', { ref: `${R.factions}#Movements` });
  await s.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
  await s.call('lore_read', { ref: `${R.blackout}#chunk1` });
  await s.close();
});
afterAll(() => tmp?.cleanup());

describe('a promoted leak cannot dodge the re-derived review (the packet the ledger pins is always found)', () => {
  it('the lock lost the packet entry: capture check fails with capture_packet_not_locked, lock verify with lock_packet_not_listed', async () => {
    const made = await capture('leak.raw.json', 'drop.capture.json');
    expect([made.code, JSON.parse(made.out).failure_labels]).toEqual([0, ['author_only_leak']]);
    forge('drop.capture.json', 'drop.capture.lock.json', promote, 'ilse.packet.json');
    expect(await check('drop.capture.json')).toEqual({ code: 1, review: [['capture_packet_not_locked', '/packet_ref']], bindings: [['lock_packet_not_listed', '/files']] });
    expect(await lockVerify('drop.capture.lock.json')).toEqual({ code: 1, bindings: [['lock_packet_not_listed', '/files']] });
  });

  it('packet_ref padded with a space (the lock intact): the packet is found through the ledger, the review is re-derived and the padded ref is packet_ref_mismatch', async () => {
    expect((await capture('leak.raw.json', 'pad.capture.json')).code).toBe(0);
    forge('pad.capture.json', 'pad.capture.lock.json', (c) => {
      promote(c);
      c.packet_ref = `${c.packet_ref} `;
    });
    const r = await check('pad.capture.json');
    expect(r).toEqual({
      code: 1, bindings: [],
      review: [
        ['capture_review_mismatch', '/review_status'], ['capture_review_mismatch', '/coordinator_review/failure_labels'],
        ['capture_review_mismatch', '/coordinator_review/accepted_for_training'], ['capture_review_mismatch', '/leakage_audit/author_only_leak'],
        ['packet_ref_mismatch', '/packet_ref'],
      ],
    });
  });

  it('packet_ref (or visible_input_ref) naming another packet than the one the ledger pins, everything else honest: packet_ref_mismatch naming both, not accepted', async () => {
    expect((await capture('ilse.raw.json', 'pref.capture.json')).code).toBe(0);
    forge('pref.capture.json', 'pref.capture.lock.json', (c) => {
      c.packet_ref = 'packets/mara.packet.json';
    });
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'pref.capture.json', '--trust-key', 'k.pub.pem', '--require-accepted', '--json']);
    const c = JSON.parse(r.out).captures[0];
    const id = JSON.parse(read(PROXY_PACKET)).packet_id as string;
    expect([r.code, c.verdict, c.not_accepted, c.review]).toEqual([1, 'failed', 'not accepted: review_status accepted_as_draft is not upheld by the receipts (packet_ref_mismatch)', [{
      code: 'packet_ref_mismatch', severity: 'error', path: 'pref.capture.json', pointer: '/packet_ref',
      message: `packet_ref is "packets/mara.packet.json", which names the file mara.packet.json, but the packet the capture answered is ilse.packet.json (packet_id ${JSON.stringify(id)}, the packet its lock lists and its ledger pins): expected a path ending in ilse.packet.json, or the packet_id ${JSON.stringify(id)}`,
    }]]);
    // The packet id itself names the packet; the path capture wrote, in any folder, names it too.
    for (const ref of [id, '../elsewhere/ilse.packet.json']) {
      forge('pref.capture.json', 'pref.capture.lock.json', (d) => {
        d.packet_ref = ref;
      });
      expect(await check('pref.capture.json')).toEqual({ code: 0, review: [], bindings: [] });
    }
    forge('pref.capture.json', 'pref.capture.lock.json', (d) => {
      d.isolation.visible_input_ref = `${id}.v2`;
    });
    expect(await check('pref.capture.json')).toEqual({ code: 1, review: [['packet_ref_mismatch', '/isolation/visible_input_ref']], bindings: [] });
  });

  it('the honest capture still passes both checks', async () => {
    expect((await capture('ilse.raw.json', 'honest.capture.json')).code).toBe(0);
    expect(await check('honest.capture.json')).toEqual({ code: 0, review: [], bindings: [] });
    expect(await lockVerify('honest.capture.lock.json')).toEqual({ code: 0, bindings: [] });
  });

  it('the honest capture checked without --trust-key: UNAUTHENTICATED, its acceptance not checked (pass --trust-key), never a review mismatch; the gate refuses it', async () => {
    const plain = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'honest.capture.json']);
    expect([plain.code, plain.out.split('\n')[0], plain.out.split('\n').filter((l) => l.startsWith('  review:'))]).toEqual([1,
      'honest.capture.json: UNAUTHENTICATED — chain and hashes intact, authorship not checked (no trusted key): anyone can write such a ledger',
      ['  review: not checked — review_status "accepted_as_draft" rests on the ledger\'s authorship, which was not checked (no trusted key): re-derived without one it is draft (ledger_authorship_not_checked), so its acceptance is neither upheld nor refused — pass --trust-key (or LORETRACE_TRUSTED_KEYS, or trusted_keys in a --config file outside the vault) [capture_review_authorship_not_checked]']]);
    const gated = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'honest.capture.json', '--integrity-only', '--require-accepted', '--json']);
    const c = JSON.parse(gated.out).captures[0];
    expect([gated.code, c.verdict, c.review, c.not_accepted, JSON.parse(gated.out).totals]).toEqual([1, 'failed', [],
      'not accepted: review_status accepted_as_draft was not checked (capture_review_authorship_not_checked): pass --trust-key to check the ledger\'s authorship',
      { captures: 1, ok: 0, integrity_only: 0, review_unchecked: 0, failed: 1, invalid: 0, trace_failed: 0, lock_drift: 0, review_mismatch: 0, unreadable: 0, not_accepted: 1 }]);
    expect((await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'honest.capture.json', '--integrity-only'])).code).toBe(0);
  });
});

describe('a capture is recognised by what it is and named after the packet its ledger pins', () => {
  const variants: [string, (id: string) => string][] = [['a trailing space', (id) => `${id} `], ['.Capture', (id) => `${id.slice(0, -'.capture'.length)}.Capture`], ['a .v2 suffix', (id) => `${id}.v2`]];

  it.each(variants)('capture_id respelled with %s, a leak promoted by hand (lock re-hashed): still re-derived, capture_id_mismatch, exit 1', async (_, respell) => {
    const name = `cid${respell('x').length}${respell('x').endsWith(' ') ? 's' : ''}`;
    expect((await capture('leak.raw.json', `${name}.capture.json`)).code).toBe(0);
    forge(`${name}.capture.json`, `${name}.capture.lock.json`, (c) => {
      promote(c);
      c.capture_id = respell(c.capture_id);
    });
    expect(await check(`${name}.capture.json`)).toEqual({
      code: 1, bindings: [],
      review: [
        ['capture_review_mismatch', '/review_status'], ['capture_review_mismatch', '/coordinator_review/failure_labels'],
        ['capture_review_mismatch', '/coordinator_review/accepted_for_training'], ['capture_review_mismatch', '/leakage_audit/author_only_leak'],
        ['capture_id_mismatch', '/capture_id'],
      ],
    });
  });

  it('only capture_id respelled on the honest capture: capture_id_mismatch alone, naming the packet the ledger pins; not accepted', async () => {
    expect((await capture('ilse.raw.json', 'cidonly.capture.json')).code).toBe(0);
    const id = JSON.parse(read(at('cidonly.capture.json'))).capture_id as string;
    forge('cidonly.capture.json', 'cidonly.capture.lock.json', (c) => {
      c.capture_id = `${id} `;
    });
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'cidonly.capture.json', '--trust-key', 'k.pub.pem', '--require-accepted', '--json']);
    const c = JSON.parse(r.out).captures[0];
    expect([r.code, c.verdict, c.not_accepted, c.review]).toEqual([1, 'failed', 'not accepted: review_status accepted_as_draft is not upheld by the receipts (capture_id_mismatch)', [{
      code: 'capture_id_mismatch', severity: 'error', path: 'cidonly.capture.json', pointer: '/capture_id',
      message: `capture_id is ${JSON.stringify(`${id} `)} but the packet its receipts answer (packet_id ${JSON.stringify(id.slice(0, -'.capture'.length))}, the packet its lock lists and its ledger pins) gives ${JSON.stringify(id)}: a capture is named <packet_id>.capture of its own packet`,
    }]]);
  });

  it('cross-packet replay: a capture naming this packet whose receipts are another packet\'s signed session fails (capture_id_mismatch)', async () => {
    const other = JSON.parse(read(PROXY_PACKET));
    other.packet_id = `${other.packet_id}.other`;
    writeFileSync(at('other.packet.json'), JSON.stringify(other, null, 2) + '\n');
    const s = await fixtureSession({ ledgerPath: at('other.jsonl'), packetPath: at('other.packet.json'), clock: fakeClock(), signer: readSigningKey(read(at('k.key.pem')), 'k.key.pem') });
    await s.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` });
    await s.call('lore_read', { ref: `${R.factions}#Movements` });
    await s.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' });
    await s.call('lore_read', { ref: `${R.blackout}#chunk1` });
    await s.close();
    const made = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'other.packet.json', '--raw-output', 'ilse.raw.json', '--ledger', 'other.jsonl', '--out', 'cross.capture.json', '--model-family', 't', '--reviewer', 'r', '--trust-key', 'k.pub.pem', '--json']);
    expect([made.code, JSON.parse(made.out).review_status]).toEqual([0, 'accepted_as_draft']);
    const ilseId = JSON.parse(read(PROXY_PACKET)).packet_id as string;
    forge('cross.capture.json', 'cross.capture.lock.json', (c) => {
      c.capture_id = `${ilseId}.capture`;
      c.packet_ref = 'ilse.packet.json';
      c.isolation.visible_input_ref = 'ilse.packet.json';
    });
    expect(await check('cross.capture.json')).toEqual({ code: 1, bindings: [], review: [['capture_id_mismatch', '/capture_id'], ['packet_ref_mismatch', '/packet_ref'], ['packet_ref_mismatch', '/isolation/visible_input_ref']] });
    // The lock re-pointed at this packet instead: its ledger pins the other packet, which the lock no longer lists.
    const lock = JSON.parse(read(at('cross.capture.lock.json')));
    const row = lock.files.find((f: { path: string }) => f.path === 'other.packet.json');
    copyFileSync(PROXY_PACKET, at('ilse2.packet.json'));
    row.path = 'ilse2.packet.json';
    row.sha256 = sha256(read(at('ilse2.packet.json')));
    writeFileSync(at('cross.capture.lock.json'), JSON.stringify(lock, null, 2) + '\n');
    expect((await check('cross.capture.json')).review).toEqual([['capture_packet_not_locked', '/packet_ref']]);
  });

  it('verify-trace with --ledger and no lock: a respelled capture_id names no packet, so the session backs none of its entries (exit 1); the honest id is backed', async () => {
    expect((await capture('ilse.raw.json', 'vtcid.capture.json')).code).toBe(0);
    const doc = JSON.parse(read(at('vtcid.capture.json')));
    mkdirSync(at('vtcid'), { recursive: true });
    const verify = async (id: string) => {
      writeFileSync(at('vtcid/c.capture.json'), JSON.stringify({ ...doc, capture_id: id }, null, 2) + '\n');
      const r = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'vtcid/c.capture.json', '--ledger', 'ilse.jsonl', '--trust-key', 'k.pub.pem', '--json']);
      const t = JSON.parse(r.out).runner_captured;
      return [r.code, t.checked > 0, t.ledger_backed === t.checked];
    };
    expect(await verify(doc.capture_id)).toEqual([0, true, true]);
    expect(await verify(`${doc.capture_id} `)).toEqual([1, true, false]);
  });

  it('the capture id capture writes is <packet_id>.capture, as every Ghostlight capture\'s', async () => {
    expect(JSON.parse(read(at('honest.capture.json'))).capture_id).toBe(`${JSON.parse(read(PROXY_PACKET)).packet_id}.capture`);
  });
});

describe('a swapped raw output fails against the lock\'s raw_output_sha256', () => {
  it('capture check and lock verify fail with lock_raw_output_mismatch', async () => {
    expect((await capture('ilse.raw.json', 'swap.capture.json')).code).toBe(0);
    forge('swap.capture.json', 'swap.capture.lock.json', (c) => {
      const p = JSON.parse(c.raw_output);
      p.spoken_text = 'No berths. Not for the Compact, not for anyone. Go.';
      c.raw_output = JSON.stringify(p, null, 2);
      c.parsed_output = JSON.parse(c.raw_output);
    });
    expect(await check('swap.capture.json')).toEqual({ code: 1, review: [], bindings: [['lock_raw_output_mismatch', '/raw_output_sha256']] });
    expect(await lockVerify('swap.capture.lock.json')).toEqual({ code: 1, bindings: [['lock_raw_output_mismatch', '/raw_output_sha256']] });
  });

  it('raw_output_sha256 re-written too: the locked raw-output input file still contradicts it', async () => {
    expect((await capture('ilse.raw.json', 'swap2.capture.json')).code).toBe(0);
    let raw = '';
    forge('swap2.capture.json', 'swap2.capture.lock.json', (c) => {
      c.raw_output = c.raw_output.replace('"spoken_text":', '"spoken_text" :');
      c.parsed_output = JSON.parse(c.raw_output);
      raw = c.raw_output;
    });
    const lock = JSON.parse(read(at('swap2.capture.lock.json')));
    lock.raw_output_sha256 = sha256(raw);
    writeFileSync(at('swap2.capture.lock.json'), JSON.stringify(lock, null, 2) + '\n');
    expect(await lockVerify('swap2.capture.lock.json')).toEqual({ code: 1, bindings: [['lock_raw_output_mismatch', '/raw_output_sha256']] });
  });
});

describe('a packet edited after retrieve fails lock verify against the ledger\'s pin', () => {
  it('lock_packet_mismatch on the packet\'s entry, exit 1', async () => {
    copyFileSync(MARA_RAW, at('mara.raw.json'));
    const r = await run([
      'retrieve', '--lore', FIXTURE_VAULT, '--packet', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'),
      '--projected-context', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'),
      '--policy', join(PACKETS, 'brinefall-intake.policy.json'), '--out', 'm.packet.json', '--capture-out', 'm.lore_access.json', '--signing-key', 'k.key.pem',
    ]);
    expect(r.code).toBe(0);
    expect(await lockVerify('m.packet.lock.json')).toEqual({ code: 0, bindings: [] });
    forge('m.packet.json', 'm.packet.lock.json', (p) => {
      p.packet_prompt_text += '\nAlso: the Brinefall blackout was staged by the Compact.';
    });
    expect(await lockVerify('m.packet.lock.json')).toEqual({ code: 1, bindings: [['lock_packet_mismatch', '/files/0/sha256']] });
  });
});

describe('lore_access and isolation are re-derived from the receipts and the packet', () => {
  const forged = async (name: string, edit: (c: Record<string, any>) => void) => { // eslint-disable-line @typescript-eslint/no-explicit-any
    expect((await capture('ilse.raw.json', `${name}.capture.json`)).code).toBe(0);
    forge(`${name}.capture.json`, `${name}.capture.lock.json`, edit);
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, `${name}.capture.json`, '--trust-key', 'k.pub.pem', '--json']);
    return { code: r.code, review: JSON.parse(r.out).captures[0].review.map((f: { code: string; pointer: string }) => [f.code, f.pointer]) };
  };

  it('a future-era note the ledger never served, added to consulted_refs and followed_refs, is claimed_not_read', async () => {
    expect(await forged('future', (c) => {
      c.lore_access.consulted_refs.push('FixtureLore:World/Post-Elysium/Veil Drive.md');
      c.lore_access.followed_refs.unshift('FixtureLore:World/Post-Elysium/Veil Drive.md');
    })).toEqual({ code: 1, review: [['claimed_not_read', '/lore_access/consulted_refs/2'], ['claimed_not_read', '/lore_access/followed_refs/0']] });
    // verify-trace on the same capture says so too, from the same rule (refsNotRead).
    const v = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'future.capture.json', '--trust-key', 'k.pub.pem', '--json']);
    const j = JSON.parse(v.out);
    expect([v.code, j.verdict, j.totals.claimed_not_read, j.refs_not_read.map((c: { pointer: string }) => c.pointer)]).toEqual([1, 'failed', 2, ['/lore_access/consulted_refs/2', '/lore_access/followed_refs/0']]);
  });

  it('a rewritten research_summary, a changed mode or trace status, a receipt ref left out are capture_review_mismatch', async () => {
    expect(await forged('summary', (c) => {
      c.lore_access.research_summary = 'Read the Veil Drive note and Echo Minds; confirmed the Compact staged the blackout.';
      c.lore_access.research_trace_status = 'not_applicable';
      c.lore_access.consulted_refs.pop();
    })).toEqual({ code: 1, review: [['capture_review_mismatch', '/lore_access/research_trace_status'], ['capture_review_mismatch', '/lore_access/research_summary'], ['capture_review_mismatch', '/lore_access/consulted_refs']] });
  });

  it('isolation.fork_context true and hidden_context_refs emptied are capture_review_mismatch', async () => {
    expect(await forged('isolation', (c) => {
      c.isolation.fork_context = true;
      c.isolation.hidden_context_refs = [];
    })).toEqual({ code: 1, review: [['capture_review_mismatch', '/isolation/fork_context'], ['capture_review_mismatch', '/isolation/hidden_context_refs']] });
  });

  it('dropping runner_captured entries stays allowed (documented), the rest re-derived', async () => {
    expect(await forged('fewer', (c) => {
      c.lore_access.research_trace = c.lore_access.research_trace.slice(0, 1);
    })).toEqual({ code: 0, review: [] });
  });
});

describe('folder lock discovery refuses a shadow lock', () => {
  it('two locks listing the same output: verify-trace fails with ambiguous_lock naming both', async () => {
    const lock = JSON.parse(read(at('m.packet.lock.json')));
    lock.files = lock.files.filter((f: { path: string }) => f.path !== 'm.packet.json');
    writeFileSync(at('a.lock.json'), JSON.stringify(lock, null, 2) + '\n');
    const r = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'm.lore_access.json', '--trust-key', 'k.pub.pem']);
    expect(r.code).toBe(1);
    expect(r.err).toContain('m.lore_access.json is listed as an output by 2 locks of its folder (a.lock.json, m.packet.lock.json)');
    expect(r.err).toContain('[ambiguous_lock]');
  });
});

describe('a research capture whose receipts are unknown is never verified nor accepted', () => {
  /** The capture of `raw` re-written by hand as the forger of a gate would: accepted, no labels, every flag false, no trace. */
  const handMade = (c: Record<string, any>): void => { // eslint-disable-line @typescript-eslint/no-explicit-any
    c.review_status = 'accepted_as_draft';
    c.coordinator_review.failure_labels = [];
    for (const k of Object.keys(c.leakage_audit)) if (typeof c.leakage_audit[k] === 'boolean') c.leakage_audit[k] = false;
    c.lore_access.research_trace = [];
    c.lore_access.followed_refs.push('FixtureLore:World/Post-Elysium/Veil Drive.md');
  };
  const gate = async (file: string) => {
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, file, '--trust-key', 'k.pub.pem', '--require-accepted', '--json']);
    const c = JSON.parse(r.out).captures[0];
    return { code: r.code, verdict: c.verdict, ok: c.ok, not_accepted: c.not_accepted, review: c.review.map((f: { code: string; pointer: string }) => [f.code, f.pointer]), totals: JSON.parse(r.out).totals };
  };

  it('copied alone (no lock), status accepted by hand, leak flags cleared, trace emptied, a future-era note followed: FAILED, exit 1, not accepted', async () => {
    // The author-only note's own words, as the responder leaked them.
    writeFileSync(at('quote.raw.json'), read(ILSE_RAW).replace(/"spoken_text": *"[^"]*"/, '"spoken_text": "Truth is, the blackout was staged by relay keepers paid to sink a rival convoy. No character in the harbor era knows this."'));
    const made = await capture('quote.raw.json', 'quote.capture.json');
    expect([made.code, JSON.parse(made.out).review_status, JSON.parse(made.out).failure_labels]).toEqual([0, 'draft', ['author_only_leak']]);
    mkdirSync(at('alone'));
    const c = JSON.parse(read(at('quote.capture.json')));
    handMade(c);
    writeFileSync(at('alone/quote.capture.json'), JSON.stringify(c, null, 2) + '\n');
    const why = 'no lock lists alone/quote.capture.json (neither quote.capture.lock.json nor a *.lock.json of its folder)';
    expect(await gate('alone/quote.capture.json')).toEqual({
      code: 1, verdict: 'failed', ok: false,
      not_accepted: 'not accepted: review_status accepted_as_draft is not upheld by the receipts (research_trace_empty, capture_review_not_rederived, capture_review_mismatch, claimed_not_read)',
      review: [
        ['research_trace_empty', '/lore_access/research_trace'], ['capture_review_not_rederived', '/review_status'], ['capture_review_mismatch', '/leakage_audit/author_only_leak'],
        ['claimed_not_read', '/lore_access/consulted_refs/0'], ['claimed_not_read', '/lore_access/consulted_refs/1'],
        ['claimed_not_read', '/lore_access/followed_refs/0'], ['claimed_not_read', '/lore_access/followed_refs/1'],
      ],
      // The emptied trace is one cause, reported once, as research_trace_empty: its trace (the responder's quotes,
      // each in its lines) is not also failed as no_runner_captured_entries.
      totals: { captures: 1, ok: 0, integrity_only: 0, review_unchecked: 0, failed: 1, invalid: 0, trace_failed: 0, lock_drift: 0, review_mismatch: 1, unreadable: 0, not_accepted: 1 },
    });
    const text = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'alone/quote.capture.json', '--trust-key', 'k.pub.pem', '--require-accepted']);
    expect([text.code, ...text.out.split('\n').slice(0, 2)]).toEqual([1, 'alone/quote.capture.json: FAILED',
      '  not accepted: review_status accepted_as_draft is not upheld by the receipts (research_trace_empty, capture_review_not_rederived, capture_review_mismatch, claimed_not_read) — FAILED (--require-accepted)']);
    expect(text.out).toContain(`  review: alone/quote.capture.json /review_status: the review was not re-derived: ${why}, so the receipts and the packet it answered are unknown; review_status "accepted_as_draft", its failure_labels and its leakage flags are the file's say-so [capture_review_not_rederived]\n`);
    expect(text.out).toContain('  review: alone/quote.capture.json /leakage_audit/author_only_leak: leakage_audit.author_only_leak is false but capture check\'s own leakage audit (without the packet: the capture\'s isolation.hidden_context_refs and the vault) gives true: "the blackout was staged by relay keepers paid" — hidden_context_audit.omitted_context_refs/0 ("FixtureLore:World/Pre-Elysium/Author Notes/Brinefall Truth.md"): text of World/Pre-Elysium/Author Notes/Brinefall Truth.md lines 4-7 quoted verbatim [capture_review_mismatch]\n');
    expect(text.out).toContain(`  review: alone/quote.capture.json /lore_access/followed_refs/1: lore_access.followed_refs names "FixtureLore:World/Post-Elysium/Veil Drive.md", which no receipt shows followed: ${why} [claimed_not_read]\n`);
    // Without --require-accepted, and with --integrity-only: still FAILED (not an authorship question).
    expect((await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'alone/quote.capture.json', '--integrity-only'])).code).toBe(1);
  });

  it('the honest capture copied alone (no lock): FAILED with capture_review_not_rederived, its entries unbacked', async () => {
    copyFileSync(at('honest.capture.json'), at('alone/honest.capture.json'));
    const r = await gate('alone/honest.capture.json');
    expect([r.code, r.verdict, r.not_accepted, r.review.map(([code]: [string]) => code)]).toEqual([1, 'failed',
      'not accepted: review_status accepted_as_draft is not upheld by the receipts (capture_review_not_rederived, claimed_not_read)',
      ['capture_review_not_rederived', 'claimed_not_read', 'claimed_not_read', 'claimed_not_read']]);
    expect(r.totals).toEqual({ captures: 1, ok: 0, integrity_only: 0, review_unchecked: 0, failed: 1, invalid: 0, trace_failed: 1, lock_drift: 0, review_mismatch: 1, unreadable: 0, not_accepted: 1 });
  });

  it('under its lock, every runner_captured entry dropped (the lock re-hashed): research_trace_empty, not accepted', async () => {
    expect((await capture('ilse.raw.json', 'empty.capture.json')).code).toBe(0);
    forge('empty.capture.json', 'empty.capture.lock.json', (c) => {
      c.lore_access.research_trace = [];
    });
    expect(await gate('empty.capture.json')).toEqual({
      code: 1, verdict: 'failed', ok: false,
      not_accepted: 'not accepted: review_status accepted_as_draft is not upheld by the receipts (research_trace_empty)',
      review: [['research_trace_empty', '/lore_access/research_trace']],
      totals: { captures: 1, ok: 0, integrity_only: 0, review_unchecked: 0, failed: 1, invalid: 0, trace_failed: 0, lock_drift: 0, review_mismatch: 1, unreadable: 0, not_accepted: 1 },
    });
    // One cause, one code: the empty array is research_trace_empty alone, never also no_runner_captured_entries.
    const json = JSON.parse((await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'empty.capture.json', '--trust-key', 'k.pub.pem', '--json'])).out).captures[0];
    expect([json.trace.runner_claim, json.trace.integrity_ok]).toEqual([undefined, true]);
    const text = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'empty.capture.json', '--trust-key', 'k.pub.pem']);
    expect([text.code, text.out.includes('research_trace_empty'), text.out.includes('no_runner_captured_entries')]).toEqual([1, true, false]);
    // verify-trace, which has no research_trace_empty, still reports the claim as no_runner_captured_entries.
    const vt = JSON.parse((await run(['verify-trace', '--lore', FIXTURE_VAULT, 'empty.capture.json', '--trust-key', 'k.pub.pem', '--json'])).out);
    expect(vt.runner_claim.code).toBe('no_runner_captured_entries');
  });

  it('under its lock, the runner\'s entries relabelled responder_reported (the lock re-hashed): no_runner_captured_entries, the case it is meant for, and no research_trace_empty', async () => {
    expect((await capture('ilse.raw.json', 'relabel.capture.json')).code).toBe(0);
    forge('relabel.capture.json', 'relabel.capture.lock.json', (c) => {
      for (const e of c.lore_access.research_trace) e.origin = 'responder_reported';
    });
    const r = await run(['capture', 'check', '--lore', FIXTURE_VAULT, 'relabel.capture.json', '--trust-key', 'k.pub.pem', '--json']);
    const c = JSON.parse(r.out).captures[0];
    expect([r.code, c.trace.runner_claim.code, c.trace.runner_claim.pointer, c.review.map((f: { code: string }) => f.code).includes('research_trace_empty')]).toEqual([1, 'no_runner_captured_entries', '/lore_access/research_trace', false]);
  });

  it('a signed session that served nothing cannot even be assembled: capture_invalid (research.missing_consulted_refs), exit 1, nothing written', async () => {
    const s = await fixtureSession({ ledgerPath: at('idle.jsonl'), clock: fakeClock(), signer: readSigningKey(read(at('k.key.pem')), 'k.key.pem') });
    await s.call('lore_search', { query: 'berth' });
    await s.close();
    const made = await run(['capture', '--lore', FIXTURE_VAULT, '--packet', 'ilse.packet.json', '--raw-output', 'ilse.raw.json', '--ledger', 'idle.jsonl', '--out', 'idle.capture.json', '--model-family', 't', '--reviewer', 'r', '--trust-key', 'k.pub.pem', '--json']);
    expect([made.code, JSON.parse(made.out).error.code, JSON.parse(made.out).error.pointer]).toEqual([1, 'capture_invalid', '/lore_access/consulted_refs']);
    expect(existsSync(at('idle.capture.json'))).toBe(false);
  });
});

describe('a runner_captured claim with no runner_captured entry is never ok (verify-trace without any key)', () => {
  const TRUTH_LINES = 'Author-only: the blackout was staged by relay keepers paid to sink a rival convoy.\nNo character in the harbor era knows this.';
  /** An invented reconstruction of the author-only secret, cited at Territories lines 5-8 (token containment 0.2727). */
  const invented = {
    trace_id: 'made.up', origin: 'coordinator_reconstructed', query: 'anything', source_ref: `${R.territories}#chunk1`, source_path: 'World/Pre-Elysium/Territories.md',
    chunk_index: 1, line_start: 5, line_end: 8, extracted_constraint: 'The relay keepers staged the blackout to sink a rival convoy.', used_for: 'x',
  };
  /** The responder quoting the packet's own omitted, author-only note verbatim. */
  const quoted = {
    trace_id: 'sella.truth', origin: 'responder_reported', query: 'q', source_ref: `${R.truth}#chunk0`, source_path: 'World/Pre-Elysium/Author Notes/Brinefall Truth.md',
    chunk_index: 0, line_start: 6, line_end: 7, extracted_constraint: TRUTH_LINES, used_for: 'x',
  };
  /** The honest capture re-written by hand: accepted, no labels, every flag false, its runner_captured entries gone, `entry` the responder's only one. */
  const forged = async (name: string, entry: Record<string, unknown>): Promise<string> => {
    expect((await capture('ilse.raw.json', `${name}.src.capture.json`)).code).toBe(0);
    const c = JSON.parse(read(at(`${name}.src.capture.json`)));
    c.review_status = 'accepted_as_draft';
    c.coordinator_review.failure_labels = [];
    c.lore_access.research_trace = [];
    c.parsed_output.research_trace = [entry];
    c.raw_output = JSON.stringify(c.parsed_output);
    mkdirSync(at(name));
    writeFileSync(at(`${name}/${name}.capture.json`), JSON.stringify(c, null, 2) + '\n');
    return `${name}/${name}.capture.json`;
  };
  const verify = async (file: string, ...extra: string[]) => {
    const r = await run(['verify-trace', '--lore', FIXTURE_VAULT, file, '--json', ...extra]);
    const j = JSON.parse(r.out);
    return { code: r.code, verdict: j.verdict, ok: j.ok, integrity_ok: j.integrity_ok, runner_claim: j.runner_claim ?? null, entries: j.entries.map((e: { pointer: string; disposition: string }) => [e.pointer, e.disposition]) };
  };
  const claim = (beside: string) => ({
    code: 'no_runner_captured_entries', pointer: '/lore_access/research_trace',
    message: `research_trace_status is "runner_captured" but /lore_access/research_trace holds no entry (${beside}): a runner_captured claim with no receipt proves nothing (seed 001)`,
  });

  it('zero runner_captured entries and one invented coordinator_reconstructed entry: no_runner_captured_entries, the entry unbacked, FAILED, exit 1', async () => {
    const file = await forged('vt4', invented);
    expect(await verify(file)).toEqual({
      code: 1, verdict: 'failed', ok: false, integrity_ok: false,
      runner_claim: claim("the 1 entry of /parsed_output/research_trace is the responder's, not the runner's"),
      entries: [['/parsed_output/research_trace/0', 'unbacked']],
    });
    // A trusted key changes nothing (no ledger backs anything), nor does --integrity-only (not an authorship question).
    expect((await verify(file, '--trust-key', 'k.pub.pem')).code).toBe(1);
    expect((await verify(file, '--integrity-only')).verdict).toBe('failed');
    const text = await run(['verify-trace', '--lore', FIXTURE_VAULT, file]);
    expect(text.code).toBe(1);
    expect(text.out).toContain(`  no_runner_captured_entries /lore_access/research_trace: ${claim("the 1 entry of /parsed_output/research_trace is the responder's, not the runner's").message}\n`);
    expect(text.out.split('\n').at(-2)).toBe('runner_captured: 0 entries: 0 ledger-backed and verified, 0 failed; other entries: unbacked 1; session: no_runner_captured_entries 1 — FAILED');
  });

  it('zero runner_captured entries and a responder quote of the packet\'s omitted author-only note: policy_violation, FAILED, exit 1; validate capture refuses it', async () => {
    const file = await forged('vt5', quoted);
    const r = await verify(file);
    expect(r).toEqual({
      code: 1, verdict: 'failed', ok: false, integrity_ok: false,
      runner_claim: claim("the 1 entry of /parsed_output/research_trace is the responder's, not the runner's"),
      entries: [['/parsed_output/research_trace/0', 'policy_violation']],
    });
    const text = await run(['verify-trace', '--lore', FIXTURE_VAULT, file]);
    expect(text.out).toContain(`  policy_violation sella.truth (responder_reported) ${R.truth}#chunk0 L6-L7 chunk 0\n                 source_ref "${R.truth}#chunk0" names the hidden ref "${R.truth}" of isolation.hidden_context_refs (the packet's hidden_context_audit.omitted_context_refs); expected trace entries only from lore the packet does not omit\n`);
    expect(text.out.split('\n').at(-2)).toBe('runner_captured: 0 entries: 0 ledger-backed and verified, 0 failed; other entries: policy_violation 1; session: no_runner_captured_entries 1 — FAILED');
    const v = await run(['validate', 'capture', file, '--json']);
    expect([v.code, JSON.parse(v.out).reports[0].errors.map((e: { rule: string; pointer: string }) => [e.rule, e.pointer])]).toEqual([1, [['capture.hidden_ref_consulted', '/parsed_output/research_trace/0/source_ref']]]);
  });

  it('the same quote beside the honest, ledger-backed entries under its lock: policy_violation still fails the file with a trusted key', async () => {
    expect((await capture('ilse.raw.json', 'vt6.capture.json')).code).toBe(0);
    forge('vt6.capture.json', 'vt6.capture.lock.json', (c) => {
      c.parsed_output.research_trace.push(quoted);
      c.raw_output = JSON.stringify(c.parsed_output);
    });
    const r = await verify('vt6.capture.json', '--trust-key', 'k.pub.pem');
    expect([r.code, r.verdict, r.runner_claim, r.entries.filter(([, d]: [string, string]) => d !== 'verified')]).toEqual([1, 'failed', null, [
      ['/parsed_output/research_trace/0', 'unverifiable'], ['/parsed_output/research_trace/1', 'unverifiable'], ['/parsed_output/research_trace/2', 'policy_violation'],
    ]]);
  });

  it('the honest capture: ok with its trusted key (exit 0), UNAUTHENTICATED without (exit 1)', async () => {
    expect((await capture('ilse.raw.json', 'vt7.capture.json')).code).toBe(0);
    const trusted = await verify('vt7.capture.json', '--trust-key', 'k.pub.pem');
    expect([trusted.code, trusted.verdict, trusted.runner_claim]).toEqual([0, 'verified', null]);
    expect([...new Set(trusted.entries.map(([, d]: [string, string]) => d))]).toEqual(['verified', 'unverifiable']);
    const bare = await verify('vt7.capture.json');
    expect([bare.code, bare.verdict, bare.integrity_ok]).toEqual([1, 'integrity_only', true]);
  });

  it('capture writes a raw output whose own trace quotes the omitted note as a draft labelled hidden_ref_consulted; capture check re-derives the same review and fails it (invalid, policy_violation)', async () => {
    const raw = JSON.parse(read(ILSE_RAW));
    raw.research_trace.push(quoted);
    writeFileSync(at('cites.raw.json'), JSON.stringify(raw, null, 2));
    const made = await capture('cites.raw.json', 'cites.capture.json');
    const out = JSON.parse(made.out);
    expect([made.code, out.review_status, out.failure_labels, out.valid]).toEqual([0, 'draft', ['hidden_ref_consulted', 'claimed_not_read', 'author_only_leak'], false]);
    expect(out.findings.filter((f: { code: string }) => f.code === 'hidden_ref_consulted')).toEqual([{
      code: 'hidden_ref_consulted', severity: 'error', path: 'ilse.packet.json', pointer: '/parsed_output/research_trace/2/source_ref',
      message: `${R.truth}#chunk0 names the packet's omitted ref ${R.truth} (hidden_context_audit.omitted_context_refs): the responder's trace cites hidden lore`,
    }]);
    const c = await check('cites.capture.json');
    expect([c.code, c.review]).toEqual([1, []]);
  });

  it('a trace of responder quotes alone, every quote in its lines, no ledger: never verified — UNAUTHENTICATED, exit 1, even with a trusted key', async () => {
    const blackout = read(join(FIXTURE_VAULT, 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md')).split('\n').slice(10, 12).join('\n');
    writeFileSync(at('quotes.json'), JSON.stringify({ research_trace_status: 'responder_reported', research_trace: [{ ...quoted, trace_id: 'q1', source_ref: `${R.blackout}#chunk1`, source_path: 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', chunk_index: 1, line_start: 11, line_end: 12, extracted_constraint: blackout }] }));
    const r = await verify('quotes.json', '--trust-key', 'k.pub.pem');
    expect(r).toEqual({ code: 1, verdict: 'integrity_only', ok: false, integrity_ok: true, runner_claim: null, entries: [['/research_trace/0', 'unverifiable']] });
    const text = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'quotes.json', '--trust-key', 'k.pub.pem']);
    expect([text.code, text.out.split('\n').at(-2)]).toEqual([1, 'runner_captured: 0 entries: 0 ledger-backed and verified, 0 failed — UNAUTHENTICATED — entries checked against the vault, none ledger-backed: nothing shows who wrote the trace or that the research happened']);
    const accepted = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'quotes.json', '--integrity-only']);
    expect([accepted.code, accepted.out.split('\n').at(-2)]).toEqual([0, 'runner_captured: 0 entries: 0 ledger-backed and verified, 0 failed — INTEGRITY ONLY (--integrity-only) — entries checked against the vault, none ledger-backed: nothing shows who wrote the trace or that the research happened']);
  });
});

describe('verify-trace holds a capture fragment to its ledger as capture check and lock verify do', () => {
  const retrieveInto = async (dir: string) => {
    mkdirSync(at(dir), { recursive: true });
    const r = await run([
      'retrieve', '--lore', FIXTURE_VAULT, '--packet', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'),
      '--projected-context', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.projected-context.json'),
      '--policy', join(PACKETS, 'brinefall-intake.policy.json'), '--out', `${dir}/x.packet.json`, '--capture-out', `${dir}/x.lore_access.json`, '--signing-key', 'k.key.pem',
    ]);
    expect(r.code).toBe(0);
  };
  const verify = async (file: string, ...more: string[]) => {
    const r = await run(['verify-trace', '--lore', FIXTURE_VAULT, file, ...more, '--trust-key', 'k.pub.pem', '--json']);
    const j = JSON.parse(r.out);
    return { code: r.code, verdict: j.verdict, claimed_not_read: j.totals.claimed_not_read, refs: j.refs_not_read.map((c: { pointer: string; ref: string }) => [c.pointer, c.ref]), packet: j.packet_file ? [j.packet_file.file, j.packet_file.disposition, j.packet_file.source] : null };
  };
  const FUTURE = 'FixtureLore:World/Post-Elysium/Veil Drive.md';

  it('a consulted or followed ref the ledger never served, added to the fragment and re-hashed into its lock, is claimed_not_read (exit 1)', async () => {
    await retrieveInto('claims');
    expect(await verify('claims/x.lore_access.json')).toEqual({ code: 0, verdict: 'verified', claimed_not_read: 0, refs: [], packet: ['claims/x.packet.json', 'unchanged', 'lock claims/x.packet.lock.json'] });
    const f = JSON.parse(read(at('claims/x.lore_access.json')));
    f.consulted_refs.push(FUTURE);
    f.followed_refs.unshift(FUTURE);
    const text0 = JSON.stringify(f, null, 2) + '\n';
    writeFileSync(at('claims/x.lore_access.json'), text0);
    const lock = JSON.parse(read(at('claims/x.packet.lock.json')));
    Object.assign(lock.files.find((r: { path: string }) => r.path === 'x.lore_access.json'), { sha256: sha256(text0), bytes: Buffer.byteLength(text0) });
    writeFileSync(at('claims/x.packet.lock.json'), JSON.stringify(lock, null, 2) + '\n');
    expect(await verify('claims/x.lore_access.json')).toEqual({
      code: 1, verdict: 'failed', claimed_not_read: 2, refs: [['/consulted_refs/1', FUTURE], ['/followed_refs/0', FUTURE]],
      packet: ['claims/x.packet.json', 'unchanged', 'lock claims/x.packet.lock.json'],
    });
    const text = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'claims/x.lore_access.json', '--trust-key', 'k.pub.pem']);
    const lines = text.out.split('\n');
    expect(lines.find((l) => l.startsWith('  claimed_not_read /consulted_refs/1: '))).toBe(`  claimed_not_read /consulted_refs/1: consulted_refs names ${JSON.stringify(FUTURE)}, which ledger claims/x.packet.ledger.jsonl never served (they give FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md)`);
    expect(lines.at(-2)).toBe('runner_captured: 3 entries: 3 ledger-backed and verified, 0 failed; session: claimed_not_read 2 — FAILED');
  });

  it('without a lock, the packet the ledger\'s SESSION_OPENED pins is re-hashed: packet_changed, packet_missing (exit 1)', async () => {
    await retrieveInto('pinned');
    mkdirSync(at('nolock'));
    for (const f of ['x.packet.json', 'x.packet.ledger.jsonl', 'x.lore_access.json']) copyFileSync(at(`pinned/${f}`), at(`nolock/${f}`));
    const source = 'ledger nolock/x.packet.ledger.jsonl SESSION_OPENED';
    const L = ['--ledger', 'nolock/x.packet.ledger.jsonl'];
    expect(await verify('nolock/x.lore_access.json', ...L)).toEqual({ code: 0, verdict: 'verified', claimed_not_read: 0, refs: [], packet: ['nolock/x.packet.json', 'unchanged', source] });
    const packet = read(at('nolock/x.packet.json'));
    writeFileSync(at('nolock/x.packet.json'), packet.replace('"packet_prompt_text": "', '"packet_prompt_text": "The Compact staged the blackout. '));
    expect(await verify('nolock/x.lore_access.json', ...L)).toEqual({ code: 1, verdict: 'failed', claimed_not_read: 0, refs: [], packet: ['nolock/x.packet.json', 'packet_changed', source] });
    const text = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'nolock/x.lore_access.json', ...L, '--trust-key', 'k.pub.pem']);
    expect(text.out).toContain(`  packet: packet_changed    nolock/x.packet.json: sha256 now ${sha256(read(at('nolock/x.packet.json')))}, ${source} pins ${sha256(packet)} — the packet was swapped or edited after the run\n`);
    expect(text.out.split('\n').at(-2)).toBe('runner_captured: 3 entries: 3 ledger-backed and verified, 0 failed; session: packet_file packet_changed — FAILED');
    rmSync(at('nolock/x.packet.json'));
    expect(await verify('nolock/x.lore_access.json', ...L)).toEqual({ code: 1, verdict: 'failed', claimed_not_read: 0, refs: [], packet: ['nolock/x.packet.json', 'packet_missing', source] });
    // The raw ledger given as the input is held to its packet the same way.
    const raw = await run(['verify-trace', '--lore', FIXTURE_VAULT, 'nolock/x.packet.ledger.jsonl', '--trust-key', 'k.pub.pem', '--json']);
    expect([raw.code, JSON.parse(raw.out).packet_file.disposition]).toEqual([1, 'packet_missing']);
  });
});

describe('every lock field that summarises its ledger is held to the ledger', () => {
  /** Rewrite a lock in place (the lock itself is hashed nowhere, so an editor needs nothing else). */
  const editLock = (lockName: string, edit: (l: Record<string, any>) => void): void => { // eslint-disable-line @typescript-eslint/no-explicit-any
    const lock = JSON.parse(read(at(lockName)));
    edit(lock);
    writeFileSync(at(lockName), JSON.stringify(lock, null, 2) + '\n');
  };
  const findings = async (file: string, extra: string[] = ['--trust-key', 'k.pub.pem']) => {
    const r = await run(['lock', 'verify', file, ...extra, '--json']);
    const l = JSON.parse(r.out).locks[0];
    return { code: r.code, verdict: l.verdict, bindings: l.bindings.map((f: { code: string; pointer: string; message: string }) => [f.code, f.pointer]), messages: l.bindings.map((f: { message: string }) => f.message) };
  };

  it('a capture lock with another snapshot, signer key, record count, closed flag and invented or moved trace bindings fails lock verify and capture check', async () => {
    expect((await capture('ilse.raw.json', 'sum.capture.json')).code).toBe(0);
    const genuine = JSON.parse(read(at('sum.capture.lock.json')));
    const ledgerLines = read(at('ilse.jsonl')).trim().split('\n').map((l) => JSON.parse(l));
    // The capture lock records the snapshot the ledger's SESSION_OPENED pins, and the ledger's own summary.
    expect([genuine.snapshot.snapshot_id, genuine.ledger.records, genuine.ledger.closed, genuine.ledger.signer_key_id])
      .toEqual([ledgerLines[0].session.snapshot_id, ledgerLines.length, true, ledgerLines.at(-1).signature.key_id]);
    expect(await findings('sum.capture.lock.json')).toMatchObject({ code: 0, verdict: 'verified', bindings: [] });
    editLock('sum.capture.lock.json', (l) => {
      l.snapshot.snapshot_id = 'f'.repeat(64);
      l.ledger.signer_key_id = 'ff482d37a8d7e79e';
      l.ledger.records = 99;
      l.ledger.closed = false;
      l.trace_bindings[0].line_end += 1;
      l.trace_bindings.push({ trace_id: 'lt-0000000000000000:2:000000000000', source_ref: `${R.veilDrive}#chunk0`, line_start: 1, line_end: 3, disposition: 'verified', ledger_backed: true });
    });
    const r = await findings('sum.capture.lock.json');
    expect([r.code, r.verdict, r.bindings]).toEqual([1, 'failed', [
      ['lock_snapshot_mismatch', '/snapshot/snapshot_id'],
      ['lock_ledger_mismatch', '/ledger/records'],
      ['lock_ledger_mismatch', '/ledger/closed'],
      ['lock_ledger_mismatch', '/ledger/signer_key_id'],
      ['lock_binding_mismatch', '/trace_bindings/0'],
      ['lock_binding_mismatch', '/trace_bindings/3'],
    ]]);
    expect(r.messages[0]).toBe(`lock sum.capture.lock.json /snapshot/snapshot_id records "${'f'.repeat(64)}", but the ledger ilse.jsonl pins (SESSION_OPENED) snapshot "${ledgerLines[0].session.snapshot_id}": the lock was edited after the run or is not this ledger's`);
    expect(r.messages[1]).toBe(`lock sum.capture.lock.json /ledger/records records 99, but the ledger ilse.jsonl has, up to the pinned head, records: ${ledgerLines.length}: the lock was edited after the run or is not this ledger's`);
    expect(r.messages[5]).toContain(`/trace_bindings/3 binds lt-0000000000000000:2:000000000000 (${R.veilDrive}#chunk0 lines 1-3, ledger_backed), but the ledger ilse.jsonl has no such record (ledger `);
    const c = await check('sum.capture.json');
    expect([c.code, c.bindings]).toEqual([1, r.bindings]);
    // Without a key, the text does not repeat the lock's signer claim as a fact.
    const text = await run(['lock', 'verify', 'sum.capture.lock.json']);
    expect(text.out).toContain("authorship not checked (no --trust-key): who signed the ledger is unknown (the lock's claim of signer key ff482d37a8d7e79e is unverified)");
    expect(text.out).not.toContain('the lock records signer key');
    expect(text.out).toContain(`  snapshot not_checked (recorded ${'f'.repeat(12)} — NOT the snapshot its ledger pins, see the binding below)\n`);
  });

  it('a retrieve lock whose binding names another record hash or whose ledger packet_id was edited fails lock verify', async () => {
    copyFileSync(MARA_RAW, at('mara.raw.json'));
    const r = await run([
      'retrieve', '--lore', FIXTURE_VAULT, '--packet', join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'),
      '--policy', join(PACKETS, 'brinefall-intake.policy.json'), '--out', 'sum.packet.json', '--capture-out', 'sum.lore_access.json', '--signing-key', 'k.key.pem',
    ]);
    expect(r.code).toBe(0);
    expect(await findings('sum.packet.lock.json')).toMatchObject({ code: 0, bindings: [] });
    editLock('sum.packet.lock.json', (l) => {
      l.ledger.packet_id = 'another.packet';
      l.trace_bindings[0].record_hash = 'a'.repeat(64);
    });
    expect(await findings('sum.packet.lock.json')).toMatchObject({ code: 1, bindings: [['lock_ledger_mismatch', '/ledger/packet_id'], ['lock_binding_mismatch', '/trace_bindings/0']] });
  });
});

/**
 * ProxySession: tools, enforcement, refusal codes, budgets and the ledger record of every call,
 * driven in-process on lore-fixtures/FixtureLore with lore-fixtures/packets/proxy-fixture-research.packet.json.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import canonicalize from 'canonicalize';
import { openProxySession } from '../src/proxy/session.js';
import type { ProxyResponse, ProxySession } from '../src/proxy/session.js';
import { verifyLedger } from '../src/receipts/ledger.js';
import { LORE_DATA_NOTICE, toolJsonSchemas } from '../src/proxy/tools.js';
import { DEFAULT_LIMITS } from '../src/proxy/limits.js';
import { FIXTURE_VAULT, PROXY_PACKET, PROXY_PACKET_ID, R, fakeClock, fixtureSession, readLedger, tempDir } from './helpers/proxy.js';

let tmp: { dir: string; cleanup: () => void };
let session: ProxySession | null = null;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(async () => {
  if (session) await session.close();
  session = null;
  tmp.cleanup();
});

const ledgerPath = () => join(tmp.dir, 'ledger.jsonl');

function ok(r: ProxyResponse): Record<string, any> {
  if (!r.ok) throw new Error(`expected a result, got refusal ${r.refusal.code}: ${r.refusal.message}`);
  return r.result as Record<string, any>;
}
function refused(r: ProxyResponse): { code: string; message: string } {
  if (r.ok) throw new Error(`expected a refusal, got a ${r.tool} result`);
  return r.refusal;
}

describe('openProxySession', () => {
  it('admits the seeds and scope notes at depth 0 and pins packet, policy and snapshot in the first record', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const [start] = readLedger(ledgerPath());
    expect(start!.seq).toBe(0);
    expect(start!.kind).toBe('SESSION_OPENED');
    expect(start!.prev_hash).toBe('0'.repeat(64));
    expect(start!.actor).toEqual({ kind: 'system', id: 'loretrace-proxy' });
    const s = start!.session!;
    expect(s.runner).toBe('proxy');
    expect(s.required_seeds).toEqual([
      { ref: R.territories, path: 'World/Pre-Elysium/Territories.md' },
      { ref: R.factions, path: 'World/Pre-Elysium/Factions/index.md' },
    ]);
    expect(s.packet_id).toBe(PROXY_PACKET_ID);
    expect(s.packet_sha256).toBe(createHash('sha256').update(readFileSync(PROXY_PACKET)).digest('hex'));
    expect(s.packet_file).toBe('proxy-fixture-research.packet.json');
    expect(s.mode).toBe('responder_scoped_repository_search');
    expect(s.namespace).toBe('FixtureLore');
    expect(s.snapshot_id).toBe(session.index.snapshot_id);
    expect(s.snapshot_id).toMatch(/^[0-9a-f]{64}$/);
    expect(s.admitted).toEqual([
      { ref: R.territories, path: 'World/Pre-Elysium/Territories.md', via: 'seed' },
      { ref: R.factions, path: 'World/Pre-Elysium/Factions/index.md', via: 'seed' },
      { ref: R.preIndex, path: 'World/Pre-Elysium/index.md', via: 'scope' },
    ]);
    expect(s.policy_receipt).toEqual(JSON.parse(JSON.stringify(session.compiled.receipt)));
    expect((s.policy_receipt as { kind: string }[]).map((r) => r.kind)).toEqual([
      'max_link_depth', 'allowed_prefix', 'allowed_prefix', 'allowed_prefix', 'seed', 'seed', 'allowed_scope', 'allowed_scope', 'allowed_scope',
      'follow_link_class', 'follow_link_class', 'follow_link_class', 'follow_link_class', 'stop_condition', 'stop_condition', 'stop_condition',
      'hidden_ref', 'hidden_note', 'future_era_prefix',
    ]);
    expect(s.not_admitted).toEqual([]);
    expect(s.budgets).toEqual({ max_calls: 2000, max_results: 1000, max_chars_returned: 1_000_000, max_notes: null, max_reads: null, time_budget_ms: null });
  });

  it('refuses to start for a packet that does not validate, and writes no ledger', async () => {
    const bad = JSON.parse(readFileSync(PROXY_PACKET, 'utf8'));
    delete bad.lore_access.research_instructions;
    const file = join(tmp.dir, 'bad.packet.json');
    writeFileSync(file, JSON.stringify(bad));
    await expect(fixtureSession({ ledgerPath: ledgerPath(), packetPath: file })).rejects.toMatchObject({
      code: 'packet_invalid',
      message: `packet ${file} is not a valid responder packet (1 error: /lore_access/research_instructions: responder_scoped_repository_search has no lore_access.research_instructions); the proxy serves only valid packets`,
    });
    expect(() => readFileSync(ledgerPath())).toThrow();
  });

  it('refuses to start for a valid packet whose lore_access.mode is not responder_scoped_repository_search', async () => {
    const p = JSON.parse(readFileSync(PROXY_PACKET, 'utf8'));
    p.lore_access.mode = 'coordinator_scoped_retrieval';
    p.isolation_requirements.no_repo_access = true;
    const file = join(tmp.dir, 'coord.packet.json');
    writeFileSync(file, JSON.stringify(p));
    await expect(fixtureSession({ ledgerPath: ledgerPath(), packetPath: file })).rejects.toMatchObject({
      code: 'packet_wrong_mode',
      message: `packet ${file} has lore_access.mode "coordinator_scoped_retrieval"; the proxy serves only responder_scoped_repository_search packets`,
    });
  });

  it('fills limits left out with their defaults: { max_calls: 3 } enforces 3 calls and every other default', async () => {
    const open = (limits: unknown) => openProxySession({
      lore: FIXTURE_VAULT, packetPath: PROXY_PACKET, ledgerPath: ledgerPath(), limits: limits as Record<string, number>,
      indexOptions: { persist: false, workers: false }, clock: fakeClock(),
    });
    session = await open({ max_calls: 3, max_k: undefined });
    expect(session.limits).toEqual({ ...DEFAULT_LIMITS, max_calls: 3 });
    expect(readLedger(ledgerPath())[0]!.session!.limits).toEqual({ ...DEFAULT_LIMITS, max_calls: 3 });
    expect(ok(await session.call('lore_read', { ref: R.territories })).data.ref).toBe(R.territories);
    expect(ok(await session.call('lore_search', { query: 'sanctuary berths' })).k).toBe(DEFAULT_LIMITS.default_k);
    expect(ok(await session.call('research_status', {})).calls.total).toBe(3);
    expect(refused(await session.call('research_status', {}))).toEqual({ code: 'budget_exhausted', message: "the session's call budget (3 calls) is spent" });
  });

  it('refuses a limit that is unknown or not an integer ≥ 1 with bad_option naming it, before anything is written', async () => {
    const open = (limits: unknown) => openProxySession({
      lore: FIXTURE_VAULT, packetPath: PROXY_PACKET, ledgerPath: ledgerPath(), limits: limits as Record<string, number>,
      indexOptions: { persist: false, workers: false }, clock: fakeClock(),
    });
    await expect(open({ max_k: 0 })).rejects.toMatchObject({
      code: 'bad_option', exitCode: 2, message: 'proxy limit max_k must be an integer ≥ 1 (got 0)', details: { expected: 'integer ≥ 1', data: { limit: 'max_k' } },
    });
    await expect(open({ rate_burst: '5' })).rejects.toMatchObject({ code: 'bad_option', message: 'proxy limit rate_burst must be an integer ≥ 1 (got "5")' });
    await expect(open({ max_calls: null })).rejects.toMatchObject({ code: 'bad_option', message: 'proxy limit max_calls must be an integer ≥ 1 (got null)' });
    await expect(open({ max_query_chars: 2.5 })).rejects.toMatchObject({ code: 'bad_option', message: 'proxy limit max_query_chars must be an integer ≥ 1 (got 2.5)' });
    await expect(open({ max_cals: 5 })).rejects.toMatchObject({
      code: 'bad_option',
      message: `unknown proxy limit "max_cals"; the limits are ${Object.keys(DEFAULT_LIMITS).join(', ')}`,
      details: { data: { limit: 'max_cals' } },
    });
    await expect(open([5])).rejects.toMatchObject({ code: 'bad_option', message: 'proxy limits must be an object of limit names and integers (got an array)' });
    expect(() => readFileSync(ledgerPath())).toThrow();
  });

  it('refuses a ledger path that already exists (a ledger is never overwritten)', async () => {
    writeFileSync(ledgerPath(), 'keep me\n');
    await expect(fixtureSession({ ledgerPath: ledgerPath() })).rejects.toMatchObject({ code: 'ledger_exists' });
    expect(readFileSync(ledgerPath(), 'utf8')).toBe('keep me\n');
  });
});

describe('ProxySession.call lore_read', () => {
  it('returns the exact lines of a heading section as data with provenance and the fixed notice', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const r = ok(await session.call('lore_read', { ref: `${R.territories}#Brinefall Shelf` }));
    expect(r.notice).toBe(LORE_DATA_NOTICE);
    expect(r.data).toEqual({
      ref: `${R.territories}#chunk1`,
      requested_ref: `${R.territories}#Brinefall Shelf`,
      path: 'World/Pre-Elysium/Territories.md',
      chunk_index: 1,
      line_start: 5,
      line_end: 8,
      snapshot_id: session.index.snapshot_id,
      heading_path: ['Territories', 'Brinefall Shelf'],
      via: 'seed',
      depth: 0,
      content:
        '## Brinefall Shelf\n\nBrinefall Shelf is the oldest anchorage, a ring of rafts around a sunken tower. The [[Meridian Compact]] keeps its charter office here, and every berth is rented by the tide.\nSalvage rights on the shelf are sold by the hour, and a crew that overstays pays in fuel.',
      escaped_characters: { count: 0, kinds: [] },
      withheld: false,
    });
  });

  it('narrows a ref with line_start/line_end and refuses lines outside the ref as bad_request', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const r = ok(await session.call('lore_read', { ref: R.territories, line_start: 12, line_end: 13 }));
    expect(r.data.ref).toBe(`${R.territories}#L12-L13`);
    expect(r.data.content).toBe('Kestrel Reach is open water between harbors, watched by relay buoys.\n- Convoys cross it under the [[Kestrel Route Accord]].');
    const bad = refused(await session.call('lore_read', { ref: `${R.territories}#chunk1`, line_start: 4 }));
    expect(bad).toEqual({
      code: 'bad_request',
      message: `lore_read: lines 4-8 are not inside ${R.territories}#chunk1 (lines 5-8); expected 5 ≤ line_start ≤ line_end ≤ 8`,
    });
  });

  it('records one returned range per chunk a whole-note read touches', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const r = await session.call('lore_read', { ref: R.territories });
    expect(ok(r).data.ref).toBe(R.territories);
    const rec = readLedger(ledgerPath())[r.seq]!;
    expect(rec.outcome!.status).toBe('ok');
    expect(rec).toMatchObject({ kind: 'TOOL_RESULT', tool: 'lore_read', actor: { kind: 'agent', id: 'dock_warden_ilse' } });
    // payload_hash: the sha256 of the RFC 8785 form of the answer the client got.
    expect(rec.payload_hash).toBe(createHash('sha256').update(canonicalize(ok(r))!, 'utf8').digest('hex'));
    const pieces = (rec.outcome as any).served.map((p: any) => [p.ref, p.chunk_index, p.line_start, p.line_end, p.via]);
    expect((rec.outcome as any).served.every((p: any) => !('text' in p))).toBe(true);
    expect(pieces).toEqual([
      [`${R.territories}#chunk0`, 0, 1, 3, 'seed'],
      [`${R.territories}#chunk1`, 1, 5, 8, 'seed'],
      [`${R.territories}#chunk2`, 2, 10, 14, 'seed'],
    ]);
  });

  it('refuses a note that is allowed by the policy but not reached with not_reached', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    expect(refused(await session.call('lore_read', { ref: R.blackout }))).toEqual({
      code: 'not_reached',
      message: `ref ${R.blackout} is not reached yet: read a seed or scope note and lore_follow a link to it`,
    });
  });

  it('answers a hidden note and a missing note with the same not_found, and records the true reasons', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const missing = 'FixtureLore:World/Pre-Elysium/Author Notes/Nothing Here.md';
    const a = await session.call('lore_read', { ref: R.truth });
    const b = await session.call('lore_read', { ref: missing });
    expect(refused(a)).toEqual({ code: 'not_found', message: `no admitted note matches ${JSON.stringify(R.truth)} in this session's index` });
    expect(refused(b)).toEqual({ code: 'not_found', message: `no admitted note matches ${JSON.stringify(missing)} in this session's index` });
    const records = readLedger(ledgerPath());
    expect(records[a.seq]!.outcome).toMatchObject({ status: 'refused', code: 'not_found', reason: 'hidden_ref' });
    expect(records[b.seq]!.outcome).toMatchObject({ status: 'refused', code: 'not_found', reason: 'not_found' });
  });

  it('refuses future-era and out-of-prefix notes (including a sibling folder sharing a prefix name) with out_of_scope', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    for (const [ref, reason] of [[R.veilDrive, 'future_era'], [R.rumors, 'prefix_denied'], [R.home, 'prefix_denied']] as const) {
      const r = await session.call('lore_read', { ref });
      expect(refused(r)).toEqual({ code: 'out_of_scope', message: `ref "${ref}" is not in this packet's scope (out_of_scope); allowed prefixes: FixtureLore:World/Politics/, FixtureLore:World/Pre-Elysium/, FixtureLore:World/Technology/` });
      expect(readLedger(ledgerPath())[r.seq]!.outcome).toMatchObject({ code: 'out_of_scope', reason });
    }
  });

  it('finds an admitted note by its title, file name or extension-less path (as show does), and a name no admitted note has gets the refusal it got before', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const byTitle = ok(await session.call('lore_read', { ref: 'Territories' }));
    expect([byTitle.data.ref, byTitle.data.line_start, byTitle.data.line_end]).toEqual([R.territories, 1, 14]);
    const withFragment = ok(await session.call('lore_read', { ref: 'territories#Brinefall Shelf' }));
    expect([withFragment.data.ref, withFragment.data.line_start, withFragment.data.line_end]).toEqual([`${R.territories}#chunk1`, 5, 8]);
    const byPath = ok(await session.call('lore_read', { ref: 'FixtureLore:World/Pre-Elysium/Factions/index#Movements' }));
    expect([byPath.data.ref, byPath.data.line_start]).toEqual([`${R.factions}#chunk2`, 11]);
    // Not admitted yet: the same out_of_scope as any other name outside the prefixes; a hidden note's title too.
    const scope = "is not in this packet's scope (out_of_scope); allowed prefixes: FixtureLore:World/Politics/, FixtureLore:World/Pre-Elysium/, FixtureLore:World/Technology/";
    expect(refused(await session.call('lore_read', { ref: 'Brinefall Blackout' }))).toEqual({ code: 'out_of_scope', message: `ref "FixtureLore:Brinefall Blackout" ${scope}` });
    expect(refused(await session.call('lore_read', { ref: 'Brinefall Truth' }))).toEqual({ code: 'out_of_scope', message: `ref "FixtureLore:Brinefall Truth" ${scope}` });
    expect(refused(await session.call('lore_read', { ref: 'No Such Note' }))).toEqual({ code: 'out_of_scope', message: `ref "FixtureLore:No Such Note" ${scope}` });
    ok(await session.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' }));
    expect(ok(await session.call('lore_read', { ref: 'Brinefall Blackout#Aftermath' })).data.ref).toBe(`${R.blackout}#chunk1`);
    const records = readLedger(ledgerPath());
    expect(records.filter((r) => r.kind === 'TOOL_RESULT' || r.kind === 'TOOL_REFUSED').map((r) => (r.outcome as { status: string; code?: string }).status === 'ok' ? 'ok' : (r.outcome as { code: string }).code))
      .toEqual(['ok', 'ok', 'ok', 'out_of_scope', 'out_of_scope', 'out_of_scope', 'ok', 'ok']);
  });

  it('refuses malformed refs with bad_ref and malformed arguments with bad_request', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    expect(refused(await session.call('lore_read', { ref: 'FixtureLore:World/../Home.md' }))).toEqual({
      code: 'bad_ref',
      message: 'ref "FixtureLore:World/../Home.md" is not a lore ref (bad_ref); expected FixtureLore:folder/Note.md, optionally with #Heading, #chunkN, #La-Lb or #^block',
    });
    expect(refused(await session.call('lore_read', { ref: 42 }))).toEqual({ code: 'bad_request', message: 'lore_read: argument ref must be a string' });
    expect(refused(await session.call('lore_read', {}))).toEqual({ code: 'bad_request', message: 'lore_read: argument ref is required (a string)' });
    expect(refused(await session.call('lore_search', { query: '' }))).toEqual({ code: 'bad_request', message: 'lore_search: argument query must be a non-empty string' });
    expect(refused(await session.call('lore_search', { query: 'x', k: 1.5 }))).toEqual({ code: 'bad_request', message: 'lore_search: argument k must be an integer' });
    expect(refused(await session.call('lore_search', { query: 'x', k: 0 }))).toEqual({ code: 'bad_request', message: 'lore_search: argument k must be at least 1' });
    expect(refused(await session.call('lore_read', { ref: R.territories, extra: 1 }))).toMatchObject({ code: 'bad_request' });
    expect(refused(await session.call('lore_delete', {}))).toEqual({
      code: 'bad_request',
      message: 'unknown tool "lore_delete"; expected one of lore_search, lore_read, lore_links, lore_follow, research_status',
    });
  });
});

describe('ProxySession.call lore_follow', () => {
  it('admits a linked note at depth + 1 and makes it readable', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const r = ok(await session.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' }));
    expect(r.admitted).toEqual({
      ref: R.blackout,
      path: 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md',
      depth: 1,
      from_ref: R.territories,
      link: { line: 14, column: 34, syntax: 'wikilink' },
      newly_admitted: true,
    });
    const read = ok(await session.call('lore_read', { ref: `${R.blackout}#Aftermath` }));
    expect(read.data).toMatchObject({ line_start: 9, line_end: 13, via: 'follow', depth: 1 });
  });

  it('accepts the target as a ref and refuses a target no link leads to with not_found, by name or by ref alike', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    expect(ok(await session.call('lore_follow', { from_ref: R.territories, target: R.meridian })).admitted.depth).toBe(1);
    const byRef = await session.call('lore_follow', { from_ref: R.territories, target: R.quietHands });
    const byName = await session.call('lore_follow', { from_ref: R.territories, target: 'Quiet Hands' });
    const hiddenByRef = await session.call('lore_follow', { from_ref: R.territories, target: R.truth });
    expect(refused(byRef)).toEqual({
      code: 'not_found',
      message: `no link in ${R.territories} leads to ${JSON.stringify(R.quietHands)}; lore_follow only follows links that exist in the note`,
    });
    expect(refused(byName)).toEqual({
      code: 'not_found',
      message: `no link in ${R.territories} leads to "Quiet Hands"; lore_follow only follows links that exist in the note`,
    });
    expect(refused(hiddenByRef)).toEqual({
      code: 'not_found',
      message: `no link in ${R.territories} leads to ${JSON.stringify(R.truth)}; lore_follow only follows links that exist in the note`,
    });
    const records = readLedger(ledgerPath());
    expect(records[byRef.seq]!.outcome).toMatchObject({ code: 'not_found', reason: 'no_such_link', message: expect.stringContaining('World/Pre-Elysium/Factions/Movements/Quiet Hands.md exists') });
    expect(records[byName.seq]!.outcome).toMatchObject({ code: 'not_found', reason: 'no_such_link' });
    expect(records[hiddenByRef.seq]!.outcome).toMatchObject({ code: 'not_found', reason: 'no_such_link', message: expect.stringContaining('is hidden') });
  });

  it('refuses a hop beyond max_link_depth with depth_exceeded', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    ok(await session.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' }));
    const k = ok(await session.call('lore_follow', { from_ref: R.blackout, target: 'Kestrel Route Accord' }));
    expect(k.admitted.depth).toBe(2);
    const r = await session.call('lore_follow', { from_ref: R.kestrel, target: 'Harbor Neutrality' });
    expect(refused(r).code).toBe('depth_exceeded');
    expect(readLedger(ledgerPath())[r.seq]!.outcome).toMatchObject({ reason: 'depth_exceeded' });
  });

  it('lists a link beyond max_link_depth to a note already admitted at depth 1 as already_admitted, not depth_exceeded', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    ok(await session.call('lore_follow', { from_ref: R.factions, target: R.meridian }));
    expect(ok(await session.call('lore_follow', { from_ref: R.meridian, target: 'Quiet Hands' })).admitted.depth).toBe(2);
    const links = ok(await session.call('lore_links', { ref: R.quietHands }));
    expect(links.links.map((l: { target: string; admitted_depth: number | null; follow: unknown }) => [l.target, l.admitted_depth, l.follow])).toEqual([
      ['Open Ledger Society', null, { allowed: false, code: 'depth_exceeded', depth: 3 }],
      ['Meridian Compact', 1, { allowed: false, code: 'already_admitted', depth: 3 }],
    ]);
    expect(refused(await session.call('lore_follow', { from_ref: R.quietHands, target: 'Meridian Compact' })).code).toBe('depth_exceeded');
    expect((await session.call('lore_read', { ref: R.meridian })).ok).toBe(true);
  });

  it('refuses a link whose target class is not in follow_link_classes with class_not_allowed', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const r = refused(await session.call('lore_follow', { from_ref: R.preIndex, target: 'World/Pre-Elysium/Territories' }));
    expect(r.code).toBe('class_not_allowed');
  });

  it('answers links to hidden, unresolved and out-of-scope notes with the one not_found; the ledger keeps the real reason', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    ok(await session.call('lore_follow', { from_ref: R.territories, target: 'Meridian Compact' }));
    const hidden = await session.call('lore_follow', { from_ref: R.meridian, target: 'Brinefall Truth' });
    const unresolved = await session.call('lore_follow', { from_ref: R.meridian, target: 'Drowned Archive' });
    const noLink = (target: string) => ({ code: 'not_found', message: `no link in ${R.meridian} leads to ${JSON.stringify(target)}; lore_follow only follows links that exist in the note` });
    expect(refused(hidden)).toEqual(noLink('Brinefall Truth'));
    expect(refused(unresolved)).toEqual(noLink('Drowned Archive'));
    // Out of scope (future era, a sibling folder outside allowed_prefixes): the same answer as a missing target.
    const future = await session.call('lore_follow', { from_ref: R.meridian, target: 'Veil Drive' });
    const outside = await session.call('lore_follow', { from_ref: R.meridian, target: 'Dockside Rumors' });
    expect(refused(future)).toEqual(noLink('Veil Drive'));
    expect(refused(outside)).toEqual(noLink('Dockside Rumors'));
    const records = readLedger(ledgerPath());
    expect(records[hidden.seq]!.outcome).toMatchObject({ code: 'not_found', reason: 'hidden_ref' });
    expect(records[unresolved.seq]!.outcome).toMatchObject({ code: 'not_found', reason: 'unresolved' });
    expect(records[future.seq]!.outcome).toMatchObject({ code: 'not_found', reason: 'future_era' });
    expect(records[outside.seq]!.outcome).toMatchObject({ code: 'not_found', reason: 'prefix_denied' });
  });

  it('answers a right guess of a hidden or future-era target path exactly as a wrong guess (no existence oracle)', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    ok(await session.call('lore_follow', { from_ref: R.territories, target: 'Meridian Compact' }));
    const guesses = {
      hidden: R.truth,
      wrongHidden: 'FixtureLore:World/Pre-Elysium/Author Notes/Brinefall Lie.md',
      future: 'FixtureLore:World/Post-Elysium/Veil Drive.md',
      wrongFuture: 'FixtureLore:World/Post-Elysium/Veil Drive2.md',
      outside: 'FixtureLore:World/Pre-Elysium-Extra/Dockside Rumors.md',
      wrongOutside: 'FixtureLore:World/Pre-Elysium-Extra/Dockside Gossip.md',
    };
    const answers: Record<string, unknown> = {};
    const seqs: Record<string, number> = {};
    for (const [k, target] of Object.entries(guesses)) {
      const r = await session.call('lore_follow', { from_ref: R.meridian, target });
      answers[k] = refused(r);
      seqs[k] = r.seq;
    }
    for (const [k, target] of Object.entries(guesses)) {
      expect(answers[k]).toEqual({ code: 'not_found', message: `no link in ${R.meridian} leads to ${JSON.stringify(target)}; lore_follow only follows links that exist in the note` });
    }
    const records = readLedger(ledgerPath());
    expect(records[seqs.hidden!]!.outcome).toMatchObject({ reason: 'hidden_ref' });
    expect(records[seqs.future!]!.outcome).toMatchObject({ reason: 'future_era' });
    expect(records[seqs.outside!]!.outcome).toMatchObject({ reason: 'prefix_denied' });
    expect(records[seqs.wrongHidden!]!.outcome).toMatchObject({ reason: 'no_such_link' });
    expect(records[seqs.wrongFuture!]!.outcome).toMatchObject({ reason: 'no_such_link' });
  });
});

describe('ProxySession.call lore_links', () => {
  it('lists outgoing links with the follow decision and hides the identity of hidden and out-of-scope targets', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    ok(await session.call('lore_follow', { from_ref: R.territories, target: 'Meridian Compact' }));
    const r = ok(await session.call('lore_links', { ref: R.meridian }));
    expect(r.from).toEqual({ ref: R.meridian, path: 'World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md', depth: 1 });
    const byTarget = Object.fromEntries(r.links.map((l: any) => [l.target, [l.target_ref, l.target_classes, l.follow.allowed, l.follow.code]]));
    expect(byTarget['Quiet Hands']![0]).toBe(R.quietHands);
    expect(byTarget['Quiet Hands']!.slice(2)).toEqual([true, null]);
    // Future era, outside allowed_prefixes, hidden and missing: one answer, no ref, no classes.
    expect(byTarget['Veil Drive']).toEqual([null, [], false, 'not_found']);
    expect(byTarget['Dockside Rumors']).toEqual([null, [], false, 'not_found']);
    expect(byTarget['Brinefall Truth']).toEqual([null, [], false, 'not_found']);
    expect(byTarget['Drowned Archive']).toEqual([null, [], false, 'not_found']);
    const rec = readLedger(ledgerPath()).at(-1)!;
    expect((rec.outcome as any).links.filter((l: any) => l.follow !== 'ok').map((l: any) => [l.target_ref, l.follow])).toEqual(
      expect.arrayContaining([[null, 'not_found:future_era'], [null, 'not_found:prefix_denied'], [null, 'not_found:hidden_ref'], [null, 'not_found:unresolved']]));
  });
});

describe('ProxySession.call lore_search', () => {
  it('returns only hits inside the admitted notes, with provenance and no text', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const before = ok(await session.call('lore_search', { query: 'sanctuary berths blackout' }));
    const admitted = new Set(['World/Pre-Elysium/Territories.md', 'World/Pre-Elysium/Factions/index.md', 'World/Pre-Elysium/index.md']);
    expect(before.results.length).toBeGreaterThan(0);
    for (const h of before.results) {
      expect(admitted.has(h.path)).toBe(true);
      expect(Object.keys(h).sort()).toEqual(['chunk_index', 'heading_path', 'line_end', 'line_start', 'path', 'ref', 'score', 'snapshot_id']);
    }
    ok(await session.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' }));
    const after = ok(await session.call('lore_search', { query: 'sanctuary berths blackout', k: 3 }));
    expect(after.results[0].path).toBe('World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md');
    expect(after.results.length).toBeLessThanOrEqual(3);
  });

  it('refuses a k above max_k with bad_request naming the maximum, as the input schema states it', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath(), limits: { max_k: 5 } });
    expect(refused(await session.call('lore_search', { query: 'berths', k: 1000 }))).toEqual({ code: 'bad_request', message: 'lore_search: argument k is larger than the maximum of 5' });
    expect(ok(await session.call('lore_search', { query: 'berths', k: 5 })).k).toBe(5);
    const schema = toolJsonSchemas('lore_search', session.limits).inputSchema as { properties: { k: { maximum: number; description: string } } };
    expect(schema.properties.k.maximum).toBe(5);
    expect(schema.properties.k.description).toBe('Number of hits wanted (default 8; at most 5, the server\'s max_k: a larger k is refused).');
  });

  it('says a number past the safe-integer range is larger than the maximum (line_end: 1e300), as for k; only a string is longer than a limit', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    expect(refused(await session.call('lore_read', { ref: R.territories, line_end: 1e300 }))).toEqual({ code: 'bad_request', message: 'lore_read: argument line_end is larger than the maximum of 9007199254740991' });
    expect(refused(await session.call('lore_search', { query: 'berths', k: 2 ** 60 }))).toEqual({ code: 'bad_request', message: 'lore_search: argument k is larger than the maximum of 9007199254740991' });
    const rec = readLedger(ledgerPath()).at(-1)!;
    expect(rec.outcome).toEqual({ status: 'refused', code: 'bad_request', reason: 'invalid_arguments', message: 'lore_search: argument k is larger than the maximum of 9007199254740991' });
  });

  it('refuses a 1 MB query with bad_request and records a digest of it, not the query', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const query = 'x'.repeat(1024 * 1024);
    const r = await session.call('lore_search', { query });
    expect(refused(r)).toEqual({ code: 'bad_request', message: `lore_search: argument query is longer than the limit of ${DEFAULT_LIMITS.max_query_chars}` });
    const records = readLedger(ledgerPath());
    const rec = records[r.seq]!;
    expect(rec.outcome).toMatchObject({ reason: 'query_too_long' });
    // The request is the TOOL_CALL record before the outcome, which names it.
    const call = records[r.seq - 1]!;
    expect([call.kind, call.tool, rec.call_record_id, 'arguments' in rec]).toEqual(['TOOL_CALL', 'lore_search', call.record_id, false]);
    expect((call.arguments as any).query).toEqual({ $omitted: 'string', chars: 1024 * 1024, sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });
});

describe('ProxySession budgets', () => {
  it('refuses calls past max_calls with budget_exhausted', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath(), limits: { max_calls: 2 } });
    ok(await session.call('research_status', {}));
    ok(await session.call('research_status', {}));
    expect(refused(await session.call('research_status', {}))).toEqual({ code: 'budget_exhausted', message: "the session's call budget (2 calls) is spent" });
  });

  it('refuses a read that would pass max_chars_returned, leaving the budget unspent', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath(), limits: { max_chars_returned: 400 } });
    const r = ok(await session.call('lore_read', { ref: `${R.territories}#chunk1` }));
    expect(r.budgets_left.chars).toBe(400 - 284);
    expect(refused(await session.call('lore_read', { ref: `${R.territories}#chunk1` })).code).toBe('budget_exhausted');
    expect(ok(await session.call('lore_read', { ref: `${R.territories}#chunk0` })).data.line_start).toBe(1);
  });

  it('enforces the budgets of the policy stop_conditions (max_refs, max_chunks, max_chars, time_budget_ms), the smaller of policy and server winning', async () => {
    const p = JSON.parse(readFileSync(PROXY_PACKET, 'utf8'));
    p.lore_access.traversal_policy.stop_conditions.push('max_refs:2', 'max_chunks:3', 'max_chars:5000', 'time_budget_ms:5000');
    const file = join(tmp.dir, 'budgets.packet.json');
    writeFileSync(file, JSON.stringify(p, null, 2));
    const clock = fakeClock();
    session = await fixtureSession({ ledgerPath: ledgerPath(), packetPath: file, clock });
    expect(readLedger(ledgerPath())[0]!.session!.budgets).toEqual({
      max_calls: 2000, max_results: 1000, max_chars_returned: 5000, max_notes: 2, max_reads: 3, time_budget_ms: 5000,
    });
    expect(ok(await session.call('lore_read', { ref: `${R.territories}#chunk0` })).budgets_left).toMatchObject({ notes: 1, reads: 2 });
    expect(ok(await session.call('lore_read', { ref: `${R.factions}#chunk0` })).budgets_left).toMatchObject({ notes: 0, reads: 1 });
    const third = await session.call('lore_read', { ref: `${R.preIndex}#chunk0` });
    expect(refused(third)).toEqual({
      code: 'budget_exhausted',
      message: "the session's note budget (2 notes, policy max_refs) is spent; notes already read stay readable",
    });
    expect(ok(await session.call('lore_read', { ref: `${R.territories}#chunk1` })).budgets_left).toMatchObject({ notes: 0, reads: 0 });
    const fourth = await session.call('lore_read', { ref: `${R.territories}#chunk2` });
    expect(refused(fourth)).toEqual({ code: 'budget_exhausted', message: "the session's read budget (3 reads, policy max_chunks) is spent" });
    clock.ms.value += 5001;
    const late = await session.call('research_status', {});
    expect(refused(late)).toEqual({ code: 'budget_exhausted', message: "the session's time budget (5000 ms) is spent" });
    const records = readLedger(ledgerPath());
    expect([third, fourth, late].map((r) => (records[r.seq]!.outcome as { reason: string }).reason)).toEqual(['max_notes', 'max_reads', 'time_budget_ms']);
  });

  it('rate-limits a burst with rate_limited and admits calls again after the bucket refills', async () => {
    const clock = fakeClock();
    session = await fixtureSession({ ledgerPath: ledgerPath(), clock, limits: { rate_burst: 3, rate_per_second: 1 } });
    const burst = await Promise.all(Array.from({ length: 5 }, () => session!.call('research_status', {})));
    expect(burst.map((r) => (r.ok ? 'ok' : r.refusal.code))).toEqual(['ok', 'ok', 'ok', 'rate_limited', 'rate_limited']);
    clock.ms.value += 1000;
    expect((await session.call('research_status', {})).ok).toBe(true);
  });
});

describe('ProxySession.call research_status', () => {
  it('reports admitted refs with depth, consulted and followed refs, and a receipt without hidden rows', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    ok(await session.call('lore_read', { ref: `${R.territories}#chunk0` }));
    ok(await session.call('lore_follow', { from_ref: R.territories, target: 'Brinefall Blackout' }));
    ok(await session.call('lore_read', { ref: `${R.blackout}#chunk0` }));
    const s = ok(await session.call('research_status', {}));
    expect(s.consulted_refs).toEqual([R.territories]);
    expect(s.followed_refs).toEqual([R.blackout]);
    expect(s.admitted.map((a: any) => [a.ref, a.depth, a.via])).toEqual([
      [R.factions, 0, 'seed'],
      [R.territories, 0, 'seed'],
      [R.preIndex, 0, 'scope'],
      [R.blackout, 1, 'follow'],
    ]);
    expect(s.calls).toEqual({ total: 4, ok: 4, refused: 0 });
    expect(s.policy_receipt.some((r: any) => r.kind === 'hidden_ref')).toBe(false);
    expect(JSON.stringify(s)).not.toContain('Brinefall Truth');
  });
  it('counts each receipt row over admitted notes only and names no number of hidden refs; the ledger keeps the runner counts', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    const s = ok(await session.call('research_status', {}));
    const rows = s.policy_receipt as { kind: string; clause: string; matches: number | null; disposition: string; rule: string }[];
    // World/Pre-Elysium/ holds 13 notes; Brinefall Truth (omitted ref and author-only) is not admitted, so 12.
    // No future_era_prefix row: by default those are the vault's Post-Elysium/ folders, so listing them would
    // tell that future-era lore exists; the stop condition names none.
    expect(rows.map((r) => [r.kind, r.matches])).toEqual([
      ['max_link_depth', null], ['allowed_prefix', 12], ['allowed_prefix', 2], ['allowed_prefix', 2], ['seed', 1], ['seed', 1],
      ['allowed_scope', 1], ['allowed_scope', 1], ['allowed_scope', 1],
      ['follow_link_class', 6], ['follow_link_class', 6], ['follow_link_class', 6], ['follow_link_class', 2],
      ['stop_condition', 0], ['stop_condition', 0], ['stop_condition', null],
    ]);
    expect(rows[13]!.rule).toBe("pattern future_era: deny future-era lore: every future-era prefix (every Post-Elysium/ folder, names compared folded (case, accents, -, _, spaces and Unicode dashes ignored), and a config's future_era_prefixes, which only a config outside the vault may put in the default's place) is denied (the prefixes are enforced but not listed here)");
    expect(JSON.stringify(rows)).not.toContain('World/Post-Elysium');
    expect(rows[14]).toEqual({
      clause: 'stop before author-only plot resolution or hidden incident truth not visible to this character',
      kind: 'stop_condition', pointer: '/lore_access/traversal_policy/stop_conditions/1', disposition: 'enforced',
      rule: 'pattern hidden: deny hidden lore: every hidden_context_audit ref, config hidden_prefix and note marked author-only is denied (the hidden rows are enforced but not listed here)',
      matches: 0,
    });
    expect(JSON.stringify(rows)).not.toMatch(/hidden_context_audit ref\(s\)|deny rule\(s\)|author-only\)/);
    // The runner's receipt in SESSION_OPENED: counts over every note, the hidden rows and their numbers.
    const receipt = readLedger(ledgerPath())[0]!.session!.policy_receipt as { kind: string; matches: number | null; rule: string }[];
    expect(receipt.map((r) => r.matches)).toEqual([null, 13, 2, 2, 1, 1, 1, 1, 1, 6, 6, 6, 2, 3, 1, null, 1, 1, 3]);
    expect(receipt[14]!.rule).toBe('pattern hidden: deny hidden lore: 2 deny rule(s) and 0 hidden section(s) from 1 hidden_context_audit ref(s), 0 config hidden_prefix(es) and 1 note(s) marked author-only (always denied; see the hidden rows)');
  });

  it('says of an allowed_scope folder holding only hidden notes no count of the notes it refuses', async () => {
    const packet = JSON.parse(readFileSync(PROXY_PACKET, 'utf8'));
    // An omitted ref cannot be a scope entry (validatePacket: the prompt must not contain it), but its folder can.
    const extra = ['FixtureLore:World/Pre-Elysium/Author Notes/', 'FixtureLore:World/Pre-Elysium/Nowhere.md'];
    packet.lore_access.allowed_scope.push(...extra);
    packet.packet_prompt_text += `\n${extra.join('\n')}`;
    const file = join(tmp.dir, 'scope-hidden.packet.json');
    writeFileSync(file, JSON.stringify(packet));
    session = await fixtureSession({ ledgerPath: ledgerPath(), packetPath: file });
    const rows = (ok(await session.call('research_status', {})).policy_receipt as { kind: string; clause: string; matches: number; rule: string }[])
      .filter((r) => r.kind === 'allowed_scope').slice(3);
    expect(rows.map((r) => [r.clause, r.rule, r.matches])).toEqual([
      ['FixtureLore:World/Pre-Elysium/Author Notes/', 'not a start point: folder World/Pre-Elysium/Author Notes/ has no note that may be a start point', 0],
      ['FixtureLore:World/Pre-Elysium/Nowhere.md', 'no note World/Pre-Elysium/Nowhere.md in FixtureLore; not a start point', 0],
    ]);
    const runner = (readLedger(ledgerPath())[0]!.session!.policy_receipt as { kind: string; rule: string }[]).filter((r) => r.kind === 'allowed_scope');
    expect(runner[3]!.rule).toBe('not a start point: folder World/Pre-Elysium/Author Notes/ has no note that may be a start point: the policy refuses all 1 note under it');
  });
});

describe('ProxySession.close', () => {
  it('ends the ledger with SESSION_CLOSED totals (zeros included) and the chain verifies', async () => {
    session = await fixtureSession({ ledgerPath: ledgerPath() });
    ok(await session.call('lore_read', { ref: `${R.territories}#chunk0` }));
    refused(await session.call('lore_read', { ref: R.truth }));
    await session.close();
    const records = readLedger(ledgerPath());
    const end = records[records.length - 1]!;
    expect(end.kind).toBe('SESSION_CLOSED');
    expect(end.totals).toMatchObject({
      tool_calls: 2, ok: 1, refused: 1, not_found: 1, bad_ref: 0, bad_request: 0, out_of_scope: 0, not_reached: 0,
      depth_exceeded: 0, class_not_allowed: 0, budget_exhausted: 0, rate_limited: 0, reads: 1, notes_read: 1,
    });
    const report = await verifyLedger(readFileSync(ledgerPath(), 'utf8'));
    expect(report).toMatchObject({ valid: true, records: 6, closed: true, totals: { tool_calls: 2, ok: 1, refused: 1, unanswered: 0 } });
    expect(records.map((x) => x.kind)).toEqual(['SESSION_OPENED', 'TOOL_CALL', 'TOOL_RESULT', 'TOOL_CALL', 'TOOL_REFUSED', 'SESSION_CLOSED']);
    await expect(session.call('research_status', {})).rejects.toMatchObject({ code: 'session_closed' });
    session = null;
  });

  it('serialises concurrent calls so seq follows the order calls arrived in (each outcome right after its TOOL_CALL)', async () => {
    session = await openProxySession({
      lore: FIXTURE_VAULT, packetPath: PROXY_PACKET, ledgerPath: ledgerPath(), indexOptions: { persist: false, workers: false }, clock: fakeClock(),
    });
    const rs = await Promise.all(Array.from({ length: 20 }, (_, i) => session!.call('lore_read', { ref: `${R.territories}#chunk${i % 3}` })));
    expect(rs.map((r) => r.seq)).toEqual(Array.from({ length: 20 }, (_, i) => 2 * i + 2));
    const records = readLedger(ledgerPath());
    expect(rs.map((r) => records[r.seq]!.call_record_id)).toEqual(rs.map((r) => records[r.seq - 1]!.record_id));
  });
});

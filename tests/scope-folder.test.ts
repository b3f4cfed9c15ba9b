/**
 * A folder entry in a packet's `allowed_scope` (`FixtureLore:World/Pre-Elysium/Timeline/`): one rule
 * (scopeFolderNotes in src/policy/compile.ts) for compilePolicy, buildPacket (`retrieve`) and the proxy
 * session — the notes under the folder that the policy admits are start points at depth 0; a folder that
 * is hidden, future-era, outside the prefixes or holds no admissible note is advisory in the receipt,
 * refused by retrieve, and admits nothing in the proxy.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { compilePolicy, scopeFolderNotes } from '../src/policy/compile.js';
import { buildPacket } from '../src/packet/build.js';
import type { ResponderPacket, TraversalPolicy } from '../src/contracts/types.js';
import type { ProxyResponse, ProxySession } from '../src/proxy/session.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES, FIXTURE_VAULT } from './helpers/shared.js';
import { PROXY_PACKET, R, fixtureSession, readLedger, tempDir } from './helpers/proxy.js';

const PACKETS = join(FIXTURES, 'packets');
const readJson = <T>(f: string): T => JSON.parse(readFileSync(f, 'utf8')) as T;
const POLICY = readJson<TraversalPolicy>(join(PACKETS, 'brinefall-intake.policy.json'));
const DRAFT = readJson<ResponderPacket>(join(PACKETS, 'brinefall-intake.turn-01.mara-voss.draft.packet.json'));
const TIMELINE = 'FixtureLore:World/Pre-Elysium/Timeline/';
const MOVEMENTS = 'FixtureLore:World/Pre-Elysium/Factions/Movements/';
const AUTHOR_NOTES = 'FixtureLore:World/Pre-Elysium/Author Notes/';
const NOWHERE = 'FixtureLore:World/Pre-Elysium/Nowhere/';

let index: VaultIndex;
beforeAll(async () => {
  index = await indexVault(FIXTURE_VAULT, { persist: false, workers: false });
});

/** The brinefall draft as a coordinator-lane packet whose own lore_access declares `scope`. */
function scopedDraft(scope: string[], mode: ResponderPacket['lore_access']['mode'] = 'coordinator_scoped_retrieval'): ResponderPacket {
  const d = structuredClone(DRAFT);
  d.generation_lane = 'retrieval_augmented';
  d.lore_access.mode = mode;
  d.lore_access.allowed_scope = scope;
  return d;
}

describe('scopeFolderNotes', () => {
  it('gives the admitted notes under a folder in code-unit order, or the first rule that refuses the folder', () => {
    const c = compilePolicy(POLICY, { index, packet: { hidden_context_audit: DRAFT.hidden_context_audit } });
    expect(scopeFolderNotes(c, 'World/Pre-Elysium/Timeline/')).toEqual({
      ok: true,
      notes: ['World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', 'World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md'],
    });
    expect(scopeFolderNotes(c, 'World/Pre-Elysium/Author Notes/')).toEqual({
      ok: false, reason: 'hidden_ref', detail: 'World/Pre-Elysium/Author Notes/ is hidden (World/Pre-Elysium/Author Notes/, /hidden_context_audit/omitted_context_refs/0)',
    });
    expect(scopeFolderNotes(c, 'World/Post-Elysium/')).toEqual({
      ok: false, reason: 'future_era', detail: 'World/Post-Elysium/ is future-era lore (World/Post-Elysium/, #/default/future_era_prefixes/0)',
    });
    expect(scopeFolderNotes(c, 'World/Technology/')).toEqual({
      ok: false, reason: 'prefix_denied', detail: 'World/Technology/ is outside allowed_prefixes (World/Politics/, World/Pre-Elysium/)',
    });
    expect(scopeFolderNotes(c, 'World/Pre-Elysium/Nowhere/')).toEqual({
      ok: false, reason: 'not_found', detail: 'folder World/Pre-Elysium/Nowhere/ has no note that may be a start point: no note in this snapshot is under it',
    });
  });

  it('refuses a folder whose only notes the policy hides (frontmatter author-only), without naming them', () => {
    const c = compilePolicy(POLICY, { index });
    expect(scopeFolderNotes(c, 'World/Pre-Elysium/Author Notes/')).toEqual({
      ok: false, reason: 'not_found', detail: 'folder World/Pre-Elysium/Author Notes/ has no note that may be a start point: the policy refuses all 1 note under it',
    });
  });
});

describe('compilePolicy', () => {
  it('makes the admitted notes of a folder entry start points (enforced row), and a refused folder an advisory row', () => {
    const scope = [MOVEMENTS, TIMELINE, AUTHOR_NOTES, 'FixtureLore:World/Post-Elysium/', 'FixtureLore:World/Technology/', NOWHERE];
    const c = compilePolicy(POLICY, { index, packet: { lore_access: { allowed_scope: scope }, hidden_context_audit: DRAFT.hidden_context_audit } });
    expect(c.scope).toEqual([
      'World/Pre-Elysium/Factions/Movements/Open Ledger Society.md',
      'World/Pre-Elysium/Factions/Movements/Quiet Hands.md',
      'World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md',
    ]);
    expect(c.receipt.filter((r) => r.kind === 'allowed_scope').map((r) => [r.pointer, r.disposition, r.matches, r.rule])).toEqual([
      ['/lore_access/allowed_scope/0', 'enforced', 2, 'a folder: its 2 notes the policy admits are start points at depth 0, consulted best-first within the budgets'],
      ['/lore_access/allowed_scope/1', 'enforced', 2, 'a folder: its 2 notes the policy admits are start points at depth 0, consulted best-first within the budgets (1 already a seed or listed earlier)'],
      ['/lore_access/allowed_scope/2', 'advisory', 0, 'not a start point: World/Pre-Elysium/Author Notes/ is hidden (World/Pre-Elysium/Author Notes/, /hidden_context_audit/omitted_context_refs/0)'],
      ['/lore_access/allowed_scope/3', 'advisory', 0, 'not a start point: World/Post-Elysium/ is future-era lore (World/Post-Elysium/, #/default/future_era_prefixes/0)'],
      ['/lore_access/allowed_scope/4', 'advisory', 0, 'not a start point: World/Technology/ is outside allowed_prefixes (World/Politics/, World/Pre-Elysium/)'],
      ['/lore_access/allowed_scope/5', 'advisory', 0, 'not a start point: folder World/Pre-Elysium/Nowhere/ has no note that may be a start point: no note in this snapshot is under it'],
    ]);
  });
});

describe('buildPacket', () => {
  it('accepts a folder entry and consults its notes as start points (coordinator lane)', async () => {
    const r = await buildPacket(index, scopedDraft([MOVEMENTS]), { policy: POLICY, file: 'draft.json' });
    expect(r.packet.lore_access.allowed_scope).toEqual([MOVEMENTS]);
    expect(r.capture?.consulted_refs).toEqual([
      'FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md',
      'FixtureLore:World/Pre-Elysium/Factions/Movements/Quiet Hands.md',
      'FixtureLore:World/Pre-Elysium/Factions/Movements/Open Ledger Society.md',
    ]);
    expect(r.validation.errors).toEqual([]);
  });

  it('renders a folder entry into the research section of a valid responder-lane packet', async () => {
    const r = await buildPacket(index, scopedDraft([TIMELINE]), { policy: POLICY, lane: 'responder_scoped_repository_search', file: 'draft.json' });
    expect(r.packet.lore_access.allowed_scope).toEqual([TIMELINE]);
    expect(r.packet.packet_prompt_text).toContain(`- ${TIMELINE}\n`);
    expect(r.validation.errors).toEqual([]);
  });

  it('refuses a folder entry that compilePolicy would not make start points of, with the same reason', async () => {
    const refusal = (scope: string) => buildPacket(index, scopedDraft([scope]), { policy: POLICY, file: 'draft.json' });
    await expect(refusal(AUTHOR_NOTES)).rejects.toMatchObject({
      code: 'ref_out_of_scope',
      message: `draft.json: /lore_access/allowed_scope/0 "${AUTHOR_NOTES}" may not reach a packet: hidden_ref (World/Pre-Elysium/Author Notes/ is hidden (World/Pre-Elysium/Author Notes/, /hidden_context_audit/omitted_context_refs/0))`,
    });
    await expect(refusal(NOWHERE)).rejects.toMatchObject({
      code: 'ref_out_of_scope',
      message: `draft.json: /lore_access/allowed_scope/0 "${NOWHERE}" may not reach a packet: not_found (folder World/Pre-Elysium/Nowhere/ has no note that may be a start point: no note in this snapshot is under it)`,
    });
    await expect(refusal('FixtureLore:World/Technology/')).rejects.toMatchObject({
      code: 'ref_out_of_scope',
      message: 'draft.json: /lore_access/allowed_scope/0 "FixtureLore:World/Technology/" is outside allowed_prefixes (FixtureLore:World/Pre-Elysium/, FixtureLore:World/Politics/)',
    });
  });

  it('still refuses a folder as an excerpt source_ref (only allowed_scope names folders)', async () => {
    const d = structuredClone(DRAFT);
    d.visible_context.source_excerpts.push({ ref_id: 'x', source_ref: TIMELINE, text: 't' });
    await expect(buildPacket(index, d, { policy: POLICY, lane: 'responder_scoped_repository_search', file: 'draft.json' })).rejects.toMatchObject({
      code: 'ref_out_of_scope',
      message: `draft.json: /visible_context/source_excerpts/1/source_ref "${TIMELINE}" may not reach a packet: not_found (no note World/Pre-Elysium/Timeline/ in this snapshot)`,
    });
  });
});

describe('ProxySession', () => {
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

  /** The proxy fixture packet with `extra` scope entries (also listed in its prompt, as the validator requires). */
  function packetWithScope(extra: string[]): string {
    const p = readJson<ResponderPacket>(PROXY_PACKET);
    p.lore_access.allowed_scope.push(...extra);
    p.packet_prompt_text += extra.map((s) => `\n- ${s}`).join('');
    const file = join(tmp.dir, 'scoped.packet.json');
    writeFileSync(file, JSON.stringify(p));
    return file;
  }
  const data = (r: ProxyResponse) => (r.ok ? (r.result as { data: { via: string; depth: number } }).data : r.refusal);

  it('admits the notes under a folder entry at depth 0 and reads one without a follow', async () => {
    session = await fixtureSession({ ledgerPath: join(tmp.dir, 'ledger.jsonl'), packetPath: packetWithScope([TIMELINE, AUTHOR_NOTES]) });
    const start = readLedger(join(tmp.dir, 'ledger.jsonl'))[0]!.session!;
    expect(start.admitted.filter((a) => a.via === 'scope').map((a) => a.path)).toEqual([
      'World/Pre-Elysium/index.md',
      'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md',
      'World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md',
    ]);
    expect(start.not_admitted).toEqual([]);
    expect(data(await session.call('lore_read', { ref: R.blackout }))).toMatchObject({ via: 'scope', depth: 0 });
    expect(data(await session.call('lore_read', { ref: R.truth }))).toEqual({ code: 'not_found', message: `no admitted note matches ${JSON.stringify(R.truth)} in this session's index` });
  });
});

/**
 * The proxy on the real AetheriaLore vault with Ghostlight's Sella research packet: seeds readable,
 * a followed link within depth admitted, a Post-Elysium note and an out-of-prefix note refused, and the
 * exported fragment verifies. Skipped (visibly) when ../shared is absent.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProxySession } from '../src/proxy/session.js';
import type { ProxyResponse, ProxySession } from '../src/proxy/session.js';
import { verifyLedger } from '../src/receipts/ledger.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import { validateDocument } from '../src/contracts/validate.js';
import { sliceLines, splitLines } from '../src/notes/lines.js';
import { AETHERIA, GHOSTLIGHT, hasShared, sharedNotice } from './helpers/shared.js';
import { fakeClock, tempDir } from './helpers/proxy.js';

const SELLA = join(GHOSTLIGHT, 'packets', 'scene-02-sanctuary-intake.sella_ren.packet.research.v0.json');
const A = (p: string) => `AetheriaLore:Aetheria/Worldbuilding/${p}`;

describe.skipIf(!hasShared)(`ProxySession on AetheriaLore with the Sella research packet${hasShared ? '' : ` (${sharedNotice})`}`, () => {
  let tmp: { dir: string; cleanup: () => void };
  let session: ProxySession;
  const ledger = () => join(tmp.dir, 'sella.jsonl');
  const result = (r: ProxyResponse): Record<string, any> => {
    if (!r.ok) throw new Error(`refused ${r.refusal.code}: ${r.refusal.message}`);
    return r.result as Record<string, any>;
  };

  beforeAll(async () => {
    tmp = tempDir('loretrace-sella-');
    session = await openProxySession({
      lore: AETHERIA, packetPath: SELLA, ledgerPath: ledger(), indexOptions: { persist: false }, clock: fakeClock(),
    });
  });
  afterAll(async () => {
    await session?.close();
    tmp?.cleanup();
  });

  it('admits and reads every required seed, returning the exact lines of the file', async () => {
    const packet = JSON.parse(readFileSync(SELLA, 'utf8'));
    const seeds: string[] = packet.lore_access.traversal_policy.required_seed_refs;
    const got: [string, number, number][] = [];
    for (const ref of seeds) {
      const r = result(await session.call('lore_read', { ref }));
      expect(r.data).toMatchObject({ via: 'seed', depth: 0, path: ref.slice('AetheriaLore:'.length), snapshot_id: session.index.snapshot_id });
      const lines = splitLines(readFileSync(join(AETHERIA, r.data.path), 'utf8'));
      expect(r.data.content).toBe(sliceLines(lines, r.data.line_start, r.data.line_end));
      got.push([r.data.ref, r.data.line_start, r.data.line_end]);
    }
    expect(got).toEqual([
      [`${A('Pre-Elysium/Timeline/Events/Cold Wake Panic.md')}#chunk0`, 1, 9],
      [A('Pre-Elysium/Territories.md'), 1, 112],
      [A('Pre-Elysium/Factions/index.md'), 1, 39],
      [A('Pre-Elysium/Factions/Powers/Major/Pan-Solar Consortium.md'), 1, 23],
      [A('Pre-Elysium/Factions/Powers/Major/Aya Collective.md'), 1, 65],
    ]);
  });

  it('admits a link followed from a seed (depth 1) and from it (depth 2), and refuses the hop past max_link_depth 2', async () => {
    const from = A('Pre-Elysium/Timeline/Events/Cold Wake Panic.md');
    const cryonix = A('Pre-Elysium/Factions/Powers/Major/Cryonix.md');
    const thermal = A('Pre-Elysium/Technology/Thermal Management.md');
    const links = result(await session.call('lore_links', { ref: from })).links as any[];
    expect(links.find((l) => l.target === 'Cryonix')).toMatchObject({ line: 5, target_ref: cryonix, admitted_depth: null, follow: { allowed: true, code: null, depth: 1 } });
    const follow = result(await session.call('lore_follow', { from_ref: from, target: 'Cryonix' }));
    expect(follow.admitted).toEqual({ ref: cryonix, path: cryonix.slice('AetheriaLore:'.length), depth: 1, from_ref: from, link: { line: 5, column: 57, syntax: 'wikilink' }, newly_admitted: true });
    const read = result(await session.call('lore_read', { ref: `${cryonix}#chunk0` }));
    expect(read.data).toMatchObject({ ref: `${cryonix}#chunk0`, chunk_index: 0, line_start: 1, line_end: 5, via: 'follow', depth: 1 });
    expect(read.data.content.startsWith('*"Heat is just ambition looking for a place to die."*')).toBe(true);
    expect(result(await session.call('lore_follow', { from_ref: cryonix, target: 'Thermal Management' })).admitted).toMatchObject({ ref: thermal, depth: 2 });
    const deep = await session.call('lore_follow', { from_ref: thermal, target: 'Orbital Forge' });
    expect(deep.ok ? 'ok' : deep.refusal.code).toBe('depth_exceeded');
    const cls = await session.call('lore_follow', { from_ref: A('Pre-Elysium/Territories.md'), target: 'FTL Trigger' });
    expect(cls.ok ? 'ok' : cls.refusal.code).toBe('class_not_allowed');
  });

  it('refuses a Post-Elysium note (future_era) and a note outside the allowed prefixes (prefix_denied) with out_of_scope', async () => {
    // The client sees one answer shape for both reasons: the ref quoted, escaped and cut to 64 characters,
    // then the packet's allowed prefixes; the ledger keeps the real reason.
    const allowed = 'allowed prefixes: AetheriaLore:Aetheria/Worldbuilding/Politics/, AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/, AetheriaLore:Aetheria/Worldbuilding/Technology/';
    const cases = [
      [A('Post-Elysium/Concepts/Aether.md'), 'future_era', `ref "AetheriaLore:Aetheria/Worldbuilding/Post-Elysium/Concepts/Aether…"(67 characters) is not in this packet's scope (out_of_scope); ${allowed}`],
      ['AetheriaLore:Aetheria/Brainstorming/Technology/Thermal Stealth and Signature Warfare.md', 'prefix_denied', `ref "AetheriaLore:Aetheria/Brainstorming/Technology/Thermal Stealth a…"(87 characters) is not in this packet's scope (out_of_scope); ${allowed}`],
    ] as const;
    for (const [ref, reason, message] of cases) {
      const r = await session.call('lore_read', { ref });
      expect(r.ok ? 'ok' : r.refusal).toEqual({ code: 'out_of_scope', message });
      const rec = readFileSync(ledger(), 'utf8').trim().split('\n').map((l) => JSON.parse(l))[r.seq];
      expect(rec.outcome).toMatchObject({ status: 'refused', code: 'out_of_scope', reason });
    }
  });

  it('leaves a ledger that verifies against the vault and exports a fragment that verifies', async () => {
    const text = readFileSync(ledger(), 'utf8');
    const report = await verifyLedger(text, { index: session.index });
    expect(report.valid).toBe(true);
    expect(report.lore!.mismatched).toBe(0);
    const fragment = await exportLedger(text, { index: session.index });
    expect(report).toMatchObject({ totals: { tool_calls: 13, ok: 9, refused: 4 }, lore: { ranges: report.lore!.matched, mismatched: 0, missing: 0, file_changed: 0 } });
    const packet = JSON.parse(readFileSync(SELLA, 'utf8'));
    expect(report.packet_sha256).toBe(createHash('sha256').update(readFileSync(SELLA)).digest('hex'));
    expect(report.packet_id).toBe(packet.packet_id);
    expect(fragment.consulted_refs).toEqual(packet.lore_access.traversal_policy.required_seed_refs);
    // Followed: every note a successful lore_follow admitted, read or not — Cryonix (read) and Thermal
    // Management (followed from it at depth 2, never read); the refused hops admitted nothing.
    expect(fragment.followed_refs).toEqual([A('Pre-Elysium/Factions/Powers/Major/Cryonix.md'), A('Pre-Elysium/Technology/Thermal Management.md')]);
    const verdict = await verifyTrace(session.index, fragment, { ledgers: [{ file: 'sella.jsonl', text }] });
    expect([verdict.integrity_ok, verdict.verdict]).toEqual([true, 'integrity_only']);
    expect(verdict.runner_captured.failed).toBe(0);
    expect(verdict.runner_captured.ledger_backed).toBe(fragment.research_trace.length);
    expect([verdict.ledgers[0]!.disposition, verdict.ledgers[0]!.pin_source, verdict.totals.seed_not_consulted]).toEqual(['intact', 'the input /ledger_head', 0]);
    // Every required seed of the Sella packet was read; a hand-written copy of an entry is unbacked.
    expect(verdict.seeds.map((s) => s.disposition)).toEqual(packet.lore_access.traversal_policy.required_seed_refs.map(() => 'consulted'));
    const forged = await verifyTrace(session.index, { ...fragment, research_trace: [{ ...fragment.research_trace[0]!, trace_id: 'sella.forged' }] }, { ledgers: [{ file: 'sella.jsonl', text }] });
    expect([forged.ok, forged.totals.unbacked, forged.entries[0]!.text_verified]).toEqual([false, 1, true]);
    const validation = validateDocument('capture-fragment', fragment, { file: 'fragment.json' });
    expect([validation.valid, validation.errors, validation.warnings]).toEqual([true, [], []]);
  });
});

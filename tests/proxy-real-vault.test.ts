/**
 * The proxy on the real AetheriaLore vault with Ghostlight's Sella research packet (issue 5): seeds readable,
 * a followed link within depth admitted, a Post-Elysium note and an out-of-prefix note refused, and the
 * exported fragment verifies. Skipped (visibly) when ../shared is absent.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openProxySession } from '../src/proxy/session.js';
import type { ProxyResponse, ProxySession } from '../src/proxy/session.js';
import { exportLedger, verifyLedger } from '../src/proxy/ledger.js';
import { verifyTrace } from '../src/packet/verify-trace.js';
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

  it('admits and reads every required seed', async () => {
    const packet = JSON.parse(readFileSync(SELLA, 'utf8'));
    const seeds: string[] = packet.lore_access.traversal_policy.required_seed_refs;
    expect(seeds.length).toBe(5);
    for (const ref of seeds) {
      const r = result(await session.call('lore_read', { ref }));
      expect(r.data.via).toBe('seed');
      expect(r.data.depth).toBe(0);
      expect(r.data.path).toBe(ref.slice('AetheriaLore:'.length));
      expect(r.data.content.length).toBeGreaterThan(0);
    }
  });

  it('admits a link followed from a seed within max_link_depth and reads it', async () => {
    const from = A('Pre-Elysium/Timeline/Events/Cold Wake Panic.md');
    const links = result(await session.call('lore_links', { ref: from })).links as any[];
    const candidate = links.find((l) => l.follow.allowed && l.admitted_depth === null);
    expect(candidate).toBeDefined();
    const follow = result(await session.call('lore_follow', { from_ref: from, target: candidate.target }));
    expect(follow.admitted).toMatchObject({ ref: candidate.target_ref, depth: 1, newly_admitted: true, from_ref: from });
    const read = result(await session.call('lore_read', { ref: `${candidate.target_ref}#chunk0` }));
    expect(read.data).toMatchObject({ via: 'follow', depth: 1 });
  });

  it('refuses a Post-Elysium note and a note outside the allowed prefixes with out_of_scope', async () => {
    const post = session.index.notes.find((n) => n.path.startsWith('Aetheria/Worldbuilding/Post-Elysium/'));
    const outside = session.index.notes.find((n) => n.path.startsWith('Aetheria/Brainstorming/'));
    expect(post && outside).toBeTruthy();
    for (const path of [post!.path, outside!.path]) {
      const r = await session.call('lore_read', { ref: `AetheriaLore:${path}` });
      expect(r.ok ? 'ok' : r.refusal.code).toBe('out_of_scope');
    }
  });

  it('leaves a ledger that verifies against the vault and exports a fragment that verifies', async () => {
    const text = readFileSync(ledger(), 'utf8');
    const report = await verifyLedger(text, { index: session.index });
    expect(report.valid).toBe(true);
    expect(report.lore!.mismatched).toBe(0);
    const fragment = await exportLedger(text);
    expect(fragment.consulted_refs.length).toBe(5);
    expect(fragment.followed_refs.length).toBe(1);
    const verdict = await verifyTrace(session.index, fragment, {});
    expect(verdict.ok).toBe(true);
    expect(verdict.runner_captured.failed).toBe(0);
  });
});

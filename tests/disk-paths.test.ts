/**
 * On-disk paths (docs/PARSING.md, "Paths on disk"): a note stored under an NFD file name keeps its NFC
 * path in refs and the index, but every `source_path` loretrace writes names the file as it is on disk, so
 * `join(vault, source_path)` opens it, and verification opens it through the same lookup. The NFD-named
 * file is made in a temp copy of FixtureLore (a committed NFD name is not reliable: git on macOS folds
 * names to NFC by default, core.precomposeunicode).
 */
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { notePathOnDisk } from '../src/indexer/lookup.js';
import { compilePolicy } from '../src/policy/index.js';
import { traverse } from '../src/traversal/index.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT, PROXY_PACKET, fixtureSession, tempDir } from './helpers/proxy.js';

const NFC = 'World/Pre-Elysium/Caf\u00e9 Ysolde.md';
const NFD = 'World/Pre-Elysium/Cafe\u0301 Ysolde.md';
const BODY = '# Café Ysolde\n\nYsolde keeps the harbor café where salvage claims are settled.\n';

let tmp: { dir: string; cleanup: () => void };
let vault: string;
let index: VaultIndex;
beforeAll(async () => {
  tmp = tempDir('loretrace-disk-paths-');
  vault = join(tmp.dir, 'FixtureLore');
  cpSync(FIXTURE_VAULT, vault, { recursive: true });
  writeFileSync(join(vault, NFD), BODY);
  index = await indexVault(vault, { persist: false, workers: false });
});
afterAll(() => tmp.cleanup());

describe('a note stored under an NFD file name', () => {
  it('is indexed under its NFC path and answers its NFD on-disk name', () => {
    expect(index.notes.map((n) => n.path).filter((p) => p.includes('Ysolde'))).toEqual([NFC]);
    expect(Buffer.from(notePathOnDisk(index, NFC))).toEqual(Buffer.from(NFD));
    expect(notePathOnDisk(index, 'World/Pre-Elysium/Territories.md')).toBe('World/Pre-Elysium/Territories.md');
  });

  it('gets a traversal trace entry whose source_path is the on-disk name, with the NFC source_ref', async () => {
    const compiled = compilePolicy({
      max_link_depth: 0, allowed_prefixes: ['World/Pre-Elysium/'], required_seed_refs: [NFC],
      follow_link_classes: ['wikilink'], stop_conditions: [],
    }, { index });
    const r = traverse(index, compiled, { queries: ['salvage claims settled'] });
    expect(r.research_trace.map((t) => [t.source_ref, Buffer.from(t.source_path).toString('hex'), t.line_start, t.line_end, t.extracted_constraint])).toEqual([
      [`FixtureLore:${NFC}#chunk0`, Buffer.from(NFD).toString('hex'), 3, 3, 'Ysolde keeps the harbor café where salvage claims are settled.'],
    ]);
    expect(readFileSync(join(vault, r.research_trace[0]!.source_path), 'utf8')).toBe(BODY);
    const report = await verifyTrace(index, {
      mode: 'coordinator_scoped_retrieval', consulted_refs: [`FixtureLore:${NFC}`], followed_refs: [], research_trace: r.research_trace,
      research_trace_status: 'runner_captured', snapshot_id: index.snapshot_id, policy_receipt: [],
    });
    // No ledger backs a bare traversal: the text is checked (read through the on-disk name), the entry unbacked.
    expect(report.entries.map((e) => [e.disposition, e.text_verified])).toEqual([['unbacked', true]]);
  });

  it('is read by the proxy, exported from its ledger with the on-disk source_path, and verified against that ledger', async () => {
    const packet = JSON.parse(readFileSync(PROXY_PACKET, 'utf8'));
    packet.lore_access.allowed_scope.push(`FixtureLore:${NFC}`);
    packet.packet_prompt_text += `\n- FixtureLore:${NFC}`;
    const packetPath = join(tmp.dir, 'nfd.packet.json');
    writeFileSync(packetPath, JSON.stringify(packet, null, 2));
    const ledgerPath = join(tmp.dir, 'nfd.jsonl');
    const session = await fixtureSession({ ledgerPath, lore: vault, packetPath });
    const read = await session.call('lore_read', { ref: `FixtureLore:${NFC}` });
    await session.close();
    expect(read.ok ? (read.result as { data: { content: string } }).data.content : read.refusal).toBe(BODY.trimEnd());
    const text = readFileSync(ledgerPath, 'utf8');
    const fragment = await exportLedger(text, { index });
    expect(fragment.research_trace.map((t) => [t.source_ref, Buffer.from(t.source_path).toString('hex'), t.line_start, t.line_end])).toEqual([
      [`FixtureLore:${NFC}#chunk0`, Buffer.from(NFD).toString('hex'), 1, 3],
    ]);
    expect(readFileSync(join(vault, fragment.research_trace[0]!.source_path), 'utf8')).toBe(BODY);
    const report = await verifyTrace(index, fragment, { file: 'f.json', ledgers: [{ file: ledgerPath, text }] });
    expect(report.entries.map((e) => [e.disposition, Buffer.from(e.source_path).toString('hex')])).toEqual([['verified', Buffer.from(NFD).toString('hex')]]);
    expect([report.totals.verified, report.runner_captured]).toEqual([1, { checked: 1, failed: 0, ledger_backed: 1 }]);
    expect(report.ledgers.map((l) => [l.disposition, l.closed])).toEqual([['intact', true]]);
    // The packet's two required seeds were not read in this session: the run fails on them, not on the NFD note.
    expect(report.seeds.map((s) => s.disposition)).toEqual(['seed_not_consulted', 'seed_not_consulted']);
  });
});

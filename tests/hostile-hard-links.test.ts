/**
 * Hard links: one admission rule (src/vault/admission.ts) for every stage. A note with more than one hard
 * link is not indexed (finding `hard_link`), so search, links, traversal, the proxy (both transports) and
 * verify-trace never see it — neither a hard link to a file outside the vault nor one to a hidden note.
 */
import { cpSync, linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { outgoingLinks } from '../src/indexer/lookup.js';
import { search } from '../src/search/search.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import { fileAdmission } from '../src/vault/admission.js';
import type { ProxySession } from '../src/proxy/session.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT, PROXY_PACKET, R, fakeClock, fixtureSession, readLedger, tempDir } from './helpers/proxy.js';
import { bothTransports, type BothTransports } from './helpers/transports.js';

const CANARY = 'zyxquartz';
const HARD = 'World/Pre-Elysium/Hard Link.md';
const TRUTH_COPY = 'World/Pre-Elysium/Truth Copy.md';
const TRUTH = 'World/Pre-Elysium/Author Notes/Brinefall Truth.md';
let tmp: { dir: string; cleanup: () => void };
let vault: string;
let ledger: string;
let index: VaultIndex;
let session: ProxySession;
let io: BothTransports;

beforeAll(async () => {
  tmp = tempDir('loretrace-hardlink-');
  vault = join(tmp.dir, 'FixtureLore');
  cpSync(FIXTURE_VAULT, vault, { recursive: true });
  mkdirSync(join(tmp.dir, 'outside'));
  const outside = join(tmp.dir, 'outside', 'secret.md');
  writeFileSync(outside, `# Canary Heading\n\nThe word ${CANARY} lives outside the vault. [[Veil Drive]]\n`);
  linkSync(outside, join(vault, ...HARD.split('/')));
  linkSync(join(vault, ...TRUTH.split('/')), join(vault, ...TRUTH_COPY.split('/')));
  const packet = JSON.parse(readFileSync(PROXY_PACKET, 'utf8'));
  packet.lore_access.allowed_scope.push(`FixtureLore:${HARD}`, `FixtureLore:${TRUTH_COPY}`);
  packet.packet_prompt_text += `\n- FixtureLore:${HARD}\n- FixtureLore:${TRUTH_COPY}`;
  const packetPath = join(tmp.dir, 'p.packet.json');
  writeFileSync(packetPath, JSON.stringify(packet, null, 2));
  index = await indexVault(vault, { persist: false, workers: false });
  ledger = join(tmp.dir, 'l.jsonl');
  session = await fixtureSession({ ledgerPath: ledger, lore: vault, packetPath, clock: fakeClock() });
  io = await bothTransports(session);
});

afterAll(async () => {
  await io.close();
  await session.close();
  tmp.cleanup();
});

describe('fileAdmission', () => {
  it('admits a regular file with one link and names the refusal otherwise', () => {
    const st = (over: Partial<{ link: boolean; file: boolean; nlink: number }>) => {
      const o = { link: false, file: true, nlink: 1, ...over };
      return { isSymbolicLink: () => o.link, isFile: () => o.file, nlink: o.nlink };
    };
    expect(fileAdmission(st({}))).toBeNull();
    expect(fileAdmission(st({ nlink: 2 }))).toBe('hard_link');
    expect(fileAdmission(st({ file: false }))).toBe('not_regular_file');
    expect(fileAdmission(st({ link: true, file: false }))).toBe('symlink');
  });
});

describe('the index', () => {
  it('leaves out every note with two hard links, with a hard_link finding each', () => {
    const found = index.findings.filter((f) => f.code === 'hard_link').map((f) => f.path);
    expect(found).toEqual([TRUTH, HARD, TRUTH_COPY]);
    for (const p of [HARD, TRUTH_COPY, TRUTH]) {
      expect(index.notes.some((n) => n.path === p)).toBe(false);
      expect(index.manifest.some((m) => m.path === p)).toBe(false);
      expect(outgoingLinks(index, p)).toEqual([]);
    }
    expect(index.findings.find((f) => f.path === HARD)).toMatchObject({ severity: 'warning', message: expect.stringContaining('has 2 hard links') });
  });

  it('search finds neither the outside word nor the hidden note headings', () => {
    expect(search(index, CANARY, { k: 5 })).toEqual([]);
    expect(search(index, 'canary heading', { k: 20 }).filter((h) => h.path === HARD)).toEqual([]);
    expect(index.chunks.some((c) => c.text.includes(CANARY))).toBe(false);
  });

  it('verify-trace gives missing_file for an entry citing the hard link', async () => {
    const entry = {
      trace_id: 'T1', origin: 'runner_captured', query: 'q', source_ref: `FixtureLore:${HARD}#chunk0`, source_path: HARD,
      chunk_index: 0, line_start: 3, line_end: 3, extracted_constraint: `The word ${CANARY} lives outside the vault. [[Veil Drive]]`, used_for: 'x',
    };
    const report = await verifyTrace(index, { mode: 'coordinator_scoped_retrieval', consulted_refs: [], research_trace: [entry], research_trace_status: 'runner_captured', snapshot_id: index.snapshot_id, policy_receipt: [] });
    expect(report.entries.map((e) => e.disposition)).toEqual(['missing_file']);
    expect(report.totals.verified).toBe(0);
  });
});

const TABLE: { name: string; tool: string; args: Record<string, unknown>; code: string | null; status: number }[] = [
  { name: 'search for the outside word', tool: 'lore_search', args: { query: CANARY }, code: null, status: 200 },
  { name: 'read the hard link', tool: 'lore_read', args: { ref: `FixtureLore:${HARD}` }, code: 'not_found', status: 404 },
  { name: 'links of the hard link', tool: 'lore_links', args: { ref: `FixtureLore:${HARD}` }, code: 'not_found', status: 404 },
  { name: 'read the hard link to a hidden note', tool: 'lore_read', args: { ref: `FixtureLore:${TRUTH_COPY}` }, code: 'not_found', status: 404 },
  { name: 'follow out of the hidden copy', tool: 'lore_follow', args: { from_ref: `FixtureLore:${TRUTH_COPY}`, target: 'Veil Drive' }, code: 'not_found', status: 404 },
  { name: 'links of the hidden copy', tool: 'lore_links', args: { ref: `FixtureLore:${TRUTH_COPY}` }, code: 'not_found', status: 404 },
];

describe.each(['mcp', 'http'] as const)('the proxy over %s', (transport) => {
  it.each(TABLE)('$name: $code, nothing outside or hidden, one call in the ledger (TOOL_CALL and outcome)', async ({ tool, args, code, status }) => {
    const before = readLedger(ledger).length;
    const seen = await io.call(transport, tool, args);
    expect(seen.code).toBe(code);
    if (transport === 'http') expect(seen.status).toBe(status);
    // A search echoes its own query; nothing else of the outside file may appear.
    const shown = tool === 'lore_search' ? JSON.stringify({ ...seen.result, query: null }) : seen.text;
    for (const leak of [CANARY, 'Canary Heading', 'outside the vault', 'Veil Drive.md', 'Brinefall Truth']) expect(shown).not.toContain(leak);
    if (tool === 'lore_search') expect(seen.result?.results).toEqual([]);
    const records = readLedger(ledger);
    expect(records.length).toBe(before + 2);
    expect([records[seen.seq - 1]!.kind, records[seen.seq - 1]!.tool, records[seen.seq]!.tool]).toEqual(['TOOL_CALL', tool, tool]);
  });
});

describe('the session', () => {
  it('admits neither hard link at start (the scope names them, the index does not hold them)', () => {
    const start = readLedger(ledger)[0]!.session!;
    expect(start.admitted.map((a) => a.path)).toEqual(['World/Pre-Elysium/Territories.md', 'World/Pre-Elysium/Factions/index.md', 'World/Pre-Elysium/index.md']);
  });
});

/**
 * Hostile-input table for section-level hiding (docs/PROXY.md "Hidden sections"): the packet omits
 * `SectionLore:Harbor/Quay Ledger.md#Sealed Accord`, lines 9-16 of its seed note (the heading's chunk and its
 * `### Tithe Schedule` sub-section, as an Obsidian heading link resolves). On both transports, every probe
 * of the section — its heading under any spelling, its chunks, its lines, its link target, its words — gets
 * the answer a missing fragment gets or a result without it; a whole-note read serves the rest with one
 * marker line; scores equal an index without the section; the walk never excerpts or follows it; and
 * verify-trace refuses an entry citing its lines. Fixtures: lore-fixtures/SectionLore,
 * lore-fixtures/packets/section-hiding.research.packet.json.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { compilePolicy } from '../src/policy/index.js';
import { search, searchCorpus } from '../src/search/search.js';
import { relevanceTables, traverse } from '../src/traversal/traverse.js';
import { verifyTrace } from '../src/receipts/verify-trace.js';
import { withholdReason } from '../src/packet/scope.js';
import { WITHHELD_MARKER } from '../src/proxy/withhold.js';
import { auditLeakage } from '../src/receipts/leakage.js';
import type { ProxySession } from '../src/proxy/session.js';
import type { ResponderPacket } from '../src/contracts/types.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES } from './helpers/shared.js';
import { fixtureSession, outcomes, readLedger, tempDir } from './helpers/proxy.js';
import { bothTransports, type BothTransports, type SeenAnswer } from './helpers/transports.js';
import { makeVault } from './helpers/temp-vault.js';

const VAULT = join(FIXTURES, 'SectionLore');
const PACKET_FILE = join(FIXTURES, 'packets', 'section-hiding.research.packet.json');
const packet = JSON.parse(readFileSync(PACKET_FILE, 'utf8')) as ResponderPacket;
const QUAY = 'SectionLore:Harbor/Quay Ledger.md';
const QUAY_TEXT = readFileSync(join(VAULT, 'Harbor', 'Quay Ledger.md'), 'utf8');
const QUAY_LINES = QUAY_TEXT.split('\n');
/** Words that occur only in the hidden section (its heading, sub-heading, body and link target). */
const SECRET = ['sealed', 'accord', 'tithe', 'moonrise', 'lamplighter', 'lamp circle', 'schedule'];
const secretsIn = (text: string) => SECRET.filter((w) => text.toLowerCase().includes(w));
const lines = (a: number, b: number) => QUAY_LINES.slice(a - 1, b).join('\n');
const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

let index: VaultIndex;
let session: ProxySession;
let both: BothTransports;
let ledgerPath: string;
let cleanup: () => void;

beforeAll(async () => {
  index = await indexVault(VAULT, { persist: false, workers: false });
  const t = tempDir('loretrace-sections-');
  cleanup = t.cleanup;
  ledgerPath = join(t.dir, 'ledger.jsonl');
  session = await fixtureSession({ ledgerPath, lore: VAULT, packetPath: PACKET_FILE });
  both = await bothTransports(session);
});
afterAll(async () => {
  await both.close();
  await session.close();
  cleanup();
});

describe('the compiled policy', () => {
  it('hides lines 9-16 (chunks 2 and 3) of the seed note and keeps the note a seed', () => {
    const compiled = compilePolicy(packet.lore_access.traversal_policy!, { index, packet });
    expect(compiled.hidden).toEqual([]);
    expect(compiled.hidden_sections).toEqual([
      { path: 'Harbor/Quay Ledger.md', heading: 'Sealed Accord', line_start: 9, line_end: 16, chunks: [2, 3], pointer: '/hidden_context_audit/omitted_context_refs/0' },
    ]);
    expect(compiled.seeds).toEqual(['Harbor/Quay Ledger.md']);
    expect(compiled.receipt.find((r) => r.kind === 'stop_condition')).toMatchObject({
      disposition: 'enforced',
      rule: 'pattern hidden: deny hidden lore: 0 deny rule(s) and 1 hidden section(s) from 1 hidden_context_audit ref(s), 0 config hidden_prefix(es) and 0 note(s) marked author-only (always denied; see the hidden rows)',
    });
    expect(compiled.receipt.find((r) => r.kind === 'hidden_ref')).toMatchObject({
      clause: `${QUAY}#Sealed Accord`, disposition: 'enforced', matches: 1,
      rule: 'never consult the section "Sealed Accord" of Harbor/Quay Ledger.md (lines 9-16, chunks 2, 3): withheld from search, links, traversal and reads; the rest of the note stays readable',
    });
  });

  it('hides the whole note when the heading does not exist (fail closed)', () => {
    const p = { hidden_context_audit: { omitted_context_refs: [`${QUAY}#No Such Heading`] } };
    const compiled = compilePolicy({ ...packet.lore_access.traversal_policy!, required_seed_refs: ['SectionLore:Harbor/Tide Office.md'] }, { index, packet: p });
    expect(compiled.hidden_sections).toEqual([]);
    expect(compiled.hidden).toEqual([{ prefix: 'Harbor/Quay Ledger.md', pointer: '/hidden_context_audit/omitted_context_refs/0' }]);
  });
});

/**
 * The whole-note read as served: lines 1-8, one marker line, lines 17-20. The responder's line numbers count
 * the hidden section (disk lines 9-16) as one line, the marker's (view line 9), so disk lines 17-20 are view
 * lines 10-13 and the note has 13 lines as far as any number the proxy gives or accepts tells.
 */
const WHOLE = `${lines(1, 8)}\n${WITHHELD_MARKER}\n${lines(17, 20)}`;

describe('hostile table on both transports', () => {
  const MISSING = `${QUAY}#No Such Heading`;
  /** A probe of the section answered exactly as a missing heading: `shown` is how its message quotes the request. */
  const probe = (name: string, args: Record<string, unknown>, shown: string) => ({ name, tool: 'lore_read', args, probe: { like: { ref: MISSING }, likeShown: MISSING, shown } });
  const cases: { name: string; tool: string; args: Record<string, unknown>; probe?: { like: Record<string, unknown>; likeShown: string; shown: string }; check?: (a: SeenAnswer) => void }[] = [
    {
      name: 'a whole-note read serves the rest with one marker line and withheld: true',
      tool: 'lore_read', args: { ref: QUAY },
      check: (a) => {
        expect(a.code).toBeNull();
        expect(a.result!.data).toMatchObject({ ref: QUAY, line_start: 1, line_end: 13, content: WHOLE, withheld: true, heading_path: ['Quay Ledger'] });
      },
    },
    {
      name: 'a read of view lines 7-9 serves lines 7-8 and the marker',
      tool: 'lore_read', args: { ref: `${QUAY}#L7-L9` },
      check: (a) => expect(a.result!.data).toMatchObject({ ref: `${QUAY}#L7-L9`, line_start: 7, line_end: 9, content: `${lines(7, 8)}\n${WITHHELD_MARKER}`, withheld: true, heading_path: ['Quay Ledger', 'Berths'] }),
    },
    {
      name: 'a read of view lines 12-13 serves disk lines 19-20 under their view numbers',
      tool: 'lore_read', args: { ref: QUAY, line_start: 12, line_end: 13 },
      check: (a) => expect(a.result!.data).toMatchObject({ ref: `${QUAY}#L12-L13`, line_start: 12, line_end: 13, content: lines(19, 20), withheld: false, heading_path: ['Quay Ledger', 'Repairs'] }),
    },
    {
      name: 'a read past the view\'s end names the view\'s last line, never the disk\'s',
      tool: 'lore_read', args: { ref: QUAY, line_start: 14, line_end: 14 },
      check: (a) => expect([a.code, a.message]).toEqual(['bad_request', `lore_read: lines 14-14 are not inside ${QUAY} (lines 1-13); expected 1 ≤ line_start ≤ line_end ≤ 13`]),
    },
    {
      name: 'a read of a visible chunk says withheld: false',
      tool: 'lore_read', args: { ref: `${QUAY}#chunk4` },
      check: (a) => expect(a.result!.data).toMatchObject({ content: lines(18, 20), withheld: false }),
    },
    probe('the hidden heading', { ref: `${QUAY}#Sealed Accord` }, `${QUAY}#Sealed Accord`),
    probe('the hidden heading in lower case', { ref: `${QUAY}#sealed accord` }, `${QUAY}#sealed accord`),
    probe('its sub-heading', { ref: `${QUAY}#Tithe Schedule` }, `${QUAY}#Tithe Schedule`),
    probe('its first chunk', { ref: `${QUAY}#chunk2` }, `${QUAY}#chunk2`),
    probe('its sub-heading chunk', { ref: `${QUAY}#chunk3` }, `${QUAY}#chunk3`),
    probe('its marker line as a fragment', { ref: `${QUAY}#L9` }, `${QUAY}#L9`),
    probe('its marker line as arguments', { ref: QUAY, line_start: 9, line_end: 9 }, QUAY),
    probe('a fragment past the view\'s end (disk line 20 is view line 13)', { ref: `${QUAY}#L14-L20` }, `${QUAY}#L14-L20`),
    {
      name: 'a search for its words finds nothing',
      tool: 'lore_search', args: { query: 'sealed accord tithe moonrise lamplighters' },
      check: (a) => expect(a.result!.results).toEqual([]),
    },
    {
      name: 'a search for a word it shares with visible text finds only visible chunks',
      tool: 'lore_search', args: { query: 'ledger' },
      // the title is in every chunk's title field; chunks 2 and 3 ("the moonrise ledger") are not hits
      // each hit with its view lines: chunk4 (disk lines 18-20) is view lines 11-13
      check: (a) => expect(a.result!.results.map((r: { ref: string; line_start: number; line_end: number }) => [r.ref, r.line_start, r.line_end])).toEqual([
        [`${QUAY}#chunk0`, 1, 3], [`${QUAY}#chunk1`, 5, 7], [`${QUAY}#chunk4`, 11, 13], ['SectionLore:Harbor/Tide Office.md#chunk0', 1, 4],
      ]),
    },
    {
      name: 'its links are not listed',
      tool: 'lore_links', args: { ref: QUAY },
      check: (a) => expect(a.result!.links.map((l: { line: number; target: string }) => [l.line, l.target])).toEqual([[3, 'Tide Office'], [13, 'Tide Office']]),
    },
    {
      name: 'its link target cannot be followed', tool: 'lore_follow', args: { from_ref: QUAY, target: 'Lamp Circle' },
      probe: { like: { from_ref: QUAY, target: 'No Such Note' }, likeShown: 'No Such Note', shown: 'Lamp Circle' },
    },
  ];

  for (const transport of ['mcp', 'http'] as const) {
    for (const c of cases) {
      it(`${transport}: ${c.name}`, async () => {
        const before = readLedger(ledgerPath).length;
        const got = await both.call(transport, c.tool, c.args);
        // One call: its TOOL_CALL and its outcome.
        expect(readLedger(ledgerPath).length).toBe(before + 2);
        if (c.probe) {
          const want = await both.call(transport, c.tool, c.probe.like);
          expect(got.code).toBe('not_found');
          expect([got.code, got.status, got.message]).toEqual([want.code, want.status, want.message!.replace(c.probe.likeShown, c.probe.shown)]);
          expect(secretsIn(got.text.split(c.probe.shown).join(''))).toEqual([]);
          return;
        }
        c.check!(got);
        // nothing of the section, the client's own query aside (lore_search echoes it)
        expect(secretsIn(got.text.split(String(c.args.query ?? '\u0000')).join(''))).toEqual([]);
      });
    }
  }

  it('records what a read withheld as line ranges and a hash, never the text', async () => {
    // Each outcome with the arguments of the TOOL_CALL it answers.
    const records = outcomes(readLedger(ledgerPath));
    const whole = records.find((r) => r.kind === 'TOOL_RESULT' && r.tool === 'lore_read' && (r.arguments as { ref?: string }).ref === QUAY)!;
    expect((whole.outcome as { withheld?: unknown }).withheld).toEqual([{ line_start: 9, line_end: 16, text_sha256: sha(lines(9, 16)) }]);
    expect((whole.outcome as { served: { ref: string }[] }).served.map((s) => s.ref)).toEqual([`${QUAY}#chunk0`, `${QUAY}#chunk1`, `${QUAY}#chunk4`]);
    // every result record, the client's own probe words (arguments, echoed query) aside
    for (const r of records.filter((x) => x.kind === 'TOOL_RESULT' && secretsIn(JSON.stringify(x.arguments)).length === 0)) expect(secretsIn(JSON.stringify(r))).toEqual([]);
  });
});

describe('scores and the walk', () => {
  const CUT = QUAY_LINES.slice(0, 8).concat(QUAY_LINES.slice(16)).join('\n');
  let oracle: VaultIndex;
  beforeAll(async () => {
    oracle = await indexVault(makeVault('SectionLore', {
      'Harbor/Quay Ledger.md': CUT,
      'Harbor/Tide Office.md': readFileSync(join(VAULT, 'Harbor', 'Tide Office.md'), 'utf8'),
      'Harbor/Lamp Circle.md': readFileSync(join(VAULT, 'Harbor', 'Lamp Circle.md'), 'utf8'),
      'Harbor/Pier Notice.md': readFileSync(join(VAULT, 'Harbor', 'Pier Notice.md'), 'utf8'),
    }), { persist: false, workers: false });
  });

  it('scores a session search exactly as an index without the section ("ledger" also occurs in it)', async () => {
    const got = await both.call('http', 'lore_search', { query: 'ledger quay' });
    const corpus = searchCorpus(['Harbor/Quay Ledger.md', 'Harbor/Tide Office.md'] as never);
    const want = search(oracle, 'ledger quay', { k: 10, corpus });
    expect(got.result!.results.map((r: { score: number }) => r.score)).toEqual(want.map((h) => h.score));
    // without the withheld chunks left out of the statistics, the score would differ
    expect(search(index, 'ledger quay', { k: 10, corpus })[0]!.score).not.toBe(want[0]!.score);
  });

  it('walks from the seed without excerpting, scoring or following the section', () => {
    const compiled = compilePolicy(packet.lore_access.traversal_policy!, { index, packet });
    const rel = relevanceTables(index, compiled, ['tithe moonrise ledger']);
    // "ledger" is in the note's title (every chunk's title field) and in the section's body: chunks 2 and 3 are not scored
    expect([...rel.chunk.keys()].sort()).toEqual(['Harbor/Pier Notice.md#0', 'Harbor/Quay Ledger.md#0', 'Harbor/Quay Ledger.md#1', 'Harbor/Quay Ledger.md#4', 'Harbor/Tide Office.md#0']);
    const r = traverse(index, compiled, { queries: ['berths repairs ledger'] });
    expect(r.consulted_refs).toEqual([QUAY, 'SectionLore:Harbor/Tide Office.md']);
    expect(r.source_excerpts.map((e) => e.source_ref)).toEqual([`${QUAY}#chunk1`, 'SectionLore:Harbor/Tide Office.md#chunk0']);
    // no decision for the section's [[Lamp Circle]] (line 12): its links are not edges
    expect(r.decisions.map((d) => [d.from, d.to, d.outcome, d.reason, d.lines])).toEqual([
      ['allowed_scope', 'SectionLore:Harbor/Tide Office.md', 'followed', null, []],
      [QUAY, 'SectionLore:Harbor/Tide Office.md', 'skipped', 'already_visited', [3, 20]],
      ['SectionLore:Harbor/Tide Office.md', QUAY, 'skipped', 'class_not_allowed', [4]],
    ]);
    expect(secretsIn(JSON.stringify({ ...r, policy_receipt: [] }))).toEqual([]);
  });

  it('withholds a packet excerpt whose line links into the section', () => {
    const compiled = compilePolicy(packet.lore_access.traversal_policy!, { index, packet });
    const trace = { source_path: 'Harbor/Pier Notice.md', line_start: 3, line_end: 3, used_for: 'x' } as never;
    expect(withholdReason({ ref_id: 'x', source_ref: 'SectionLore:Harbor/Pier Notice.md#chunk0', text: 'Notice posted at the pier.' }, trace, { ...packet, hidden_context_audit: { ...packet.hidden_context_audit, omitted_context_refs: [] } }, compiled, index))
      .toBe('line 3 links [[Quay Ledger#Sealed Accord]] into a hidden section (/hidden_context_audit/omitted_context_refs/0)');
  });

  it('verify-trace refuses an entry citing lines of the section and verifies one beside it', async () => {
    const compiled = compilePolicy(packet.lore_access.traversal_policy!, { index, packet });
    const entry = (chunk: number, a: number, b: number) => ({
      trace_id: `trace.quay.${chunk}`, origin: 'runner_captured', query: 'q', source_ref: `${QUAY}#chunk${chunk}`,
      source_path: 'Harbor/Quay Ledger.md', chunk_index: chunk, line_start: a, line_end: b, extracted_constraint: lines(a, b), used_for: 'u',
    });
    const fragment = { policy_receipt: compiled.receipt, research_trace: [entry(1, 7, 7), entry(2, 11, 11), entry(3, 16, 16)] };
    const report = await verifyTrace(index, fragment as never);
    // without a ledger a verbatim entry is `unbacked` (its text verified); the section's lines are refused first
    expect(report.entries.map((e) => [e.disposition, e.text_verified])).toEqual([['unbacked', true], ['policy_violation', false], ['policy_violation', false]]);
    expect(report.entries[1]!.detail).toBe(
      `Harbor/Quay Ledger.md is hidden lore (lines 9-16 are a hidden section): policy_receipt row /policy_receipt/${compiled.receipt.findIndex((r) => r.kind === 'hidden_ref')} (hidden_ref "${QUAY}#Sealed Accord") denies it; expected runner_captured entries only from paths the policy admits`,
    );
  });
});

describe('the leakage audit of a hidden section matches the section, not the note it is in', () => {
  const audit = (spoken: string) => {
    const parsed = { spoken_text: spoken };
    return auditLeakage({ rawOutput: JSON.stringify(parsed), parsed, packet, index });
  };
  const SOURCE = `hidden_context_audit.omitted_context_refs/0 (${JSON.stringify(`${QUAY}#Sealed Accord`)})`;

  it('naming the note the section is in (its title, its path) is no leak: the rest of the note is visible', () => {
    for (const spoken of ['The Quay Ledger lists twelve berths on the eastern quay.', 'See Harbor/Quay Ledger.md for the berths.', 'the quay-ledger says so']) {
      const r = audit(spoken);
      expect([spoken, r.audit.author_only_leak, r.hits]).toEqual([spoken, false, []]);
    }
  });

  it('the section\'s own heading, a sub-section\'s heading or 8 words of its text are author_only_leak', () => {
    expect(audit('Nobody speaks of the Sealed Accord here.').hits).toEqual([{ flag: 'author_only_leak', matched: 'Sealed Accord', source: SOURCE }]);
    expect(audit('The tithe-schedule is posted nowhere.').hits).toEqual([{ flag: 'author_only_leak', matched: 'Tithe Schedule', source: SOURCE }]);
    const quoted = audit('They say the accord promises the lamplighters a tithe of every cargo.');
    expect([quoted.audit.author_only_leak, quoted.hits]).toEqual([true, [
      { flag: 'author_only_leak', matched: 'accord promises the lamplighters a tithe of every', source: `${SOURCE}: text of Harbor/Quay Ledger.md lines 9-12 quoted verbatim` },
    ]]);
    // Text of the note outside the section (the Berths section, 8+ words) is not the section's.
    expect(audit('Twelve berths line the eastern quay; the harbor master assigns them at dawn.').hits).toEqual([]);
  });

  it('a hidden whole note is still matched by its title', () => {
    const whole = { ...packet, hidden_context_audit: { ...packet.hidden_context_audit, omitted_context_refs: [QUAY] } };
    const parsed = { spoken_text: 'The Quay Ledger lists twelve berths.' };
    expect(auditLeakage({ rawOutput: JSON.stringify(parsed), parsed, packet: whole, index }).hits).toEqual([
      { flag: 'author_only_leak', matched: 'Quay Ledger', source: `hidden_context_audit.omitted_context_refs/0 (${JSON.stringify(QUAY)})` },
    ]);
  });
});

describe('a responder citing the line view a research session served (hidden sections count as one line)', () => {
  /** A responder_reported entry as a responder writes it from a read's answer: the lines and chunk it was given. */
  const cite = (a: number, b: number, chunk: number, quote: string, ref = `${QUAY}#L${a}-L${b}`) => ({
    trace_id: `responder.${a}.${b}`, origin: 'responder_reported', query: 'lore_read', source_ref: ref,
    source_path: 'Harbor/Quay Ledger.md', chunk_index: chunk, line_start: a, line_end: b, extracted_constraint: quote, used_for: 'u',
  });
  let ledgerText: string;
  let served: { line_start: number; line_end: number; chunk_index: number; content: string };

  beforeAll(async () => {
    const t = tempDir('loretrace-sections-view-');
    const path = join(t.dir, 'view.jsonl');
    const s = await fixtureSession({ ledgerPath: path, lore: VAULT, packetPath: PACKET_FILE });
    const r = await s.call('lore_read', { ref: `${QUAY}#Repairs` });
    await s.close();
    if (!r.ok) throw new Error('the read was refused');
    served = (r.result as { data: typeof served }).data;
    ledgerText = readFileSync(path, 'utf8');
    t.cleanup();
  });

  it('the read of #Repairs (disk lines 18-20) is served as view lines 11-13, chunk 4', () => {
    expect([served.line_start, served.line_end, served.chunk_index, served.content]).toEqual([11, 13, 4, lines(18, 20)]);
  });

  it('a citation of the served lines verifies against their disk lines; the marker line and lines past the view do not', async () => {
    const ledgers = [{ file: 'view.jsonl', text: ledgerText }];
    const quote = 'The quay was rebuilt after the storm';
    const report = await verifyTrace(index, { research_trace: [
      cite(13, 13, 4, quote), cite(11, 13, 4, served.content), cite(1, 3, 0, 'The quay ledger records every berth'),
      cite(9, 9, 2, WITHHELD_MARKER), cite(8, 10, 1, 'Twelve berths line the eastern quay'), cite(20, 20, 4, quote),
    ] } as never, { ledgers });
    expect(report.entries.map((e) => [e.line_start, e.line_end, e.disposition, e.similarity])).toEqual([
      [13, 13, 'unverifiable', 1], [11, 13, 'unverifiable', 1], [1, 3, 'unverifiable', 1],
      [9, 9, 'out_of_range', null], [8, 10, 'out_of_range', null], [20, 20, 'out_of_range', null],
    ]);
    expect(report.entries[0]!.detail).toBe('responder_reported entry: location checked (lines 13-13 of the line view the research session served, disk lines 20-20: a hidden section counts as one line), text not held to verbatim (token containment 1); not proof of the research path');
    expect(report.entries[3]!.detail).toBe('line 9 of the line view the research session served is the marker that stands for a hidden section of Harbor/Quay Ledger.md, not a line of the file; expected lines the session served');
    expect(report.entries[5]!.detail).toBe('lines 20-20 are not inside the line view the research session served of Harbor/Quay Ledger.md, which has 13 lines (a hidden section counts as one line); expected 1 ≤ line_start ≤ line_end ≤ 13');
    expect(report.totals.out_of_range).toBe(3);
  });

  it('without the session\'s ledger the lines are read as disk lines (a coordinator-lane trace)', async () => {
    const report = await verifyTrace(index, { research_trace: [cite(13, 13, 4, 'The quay was rebuilt after the storm')] } as never);
    expect(report.entries.map((e) => [e.disposition, e.detail])).toEqual([['chunk_mismatch', 'lines 13-13 are not inside chunk 4 of Harbor/Quay Ledger.md (lines 18-20)']]);
  });
});

describe('two headings of one name (lore-fixtures/SectionLore/Twins/Twin Accord.md: "## Sealed Accord" on lines 5 and 13)', () => {
  const TWIN = 'SectionLore:Twins/Twin Accord.md';
  const TWIN_LINES = readFileSync(join(VAULT, 'Twins', 'Twin Accord.md'), 'utf8').split('\n');
  const twin = (a: number, b: number) => TWIN_LINES.slice(a - 1, b).join('\n');
  const twinPacket = {
    ...packet,
    packet_prompt_text: `${packet.packet_prompt_text}\n\nLore scope: allowed prefix SectionLore:Twins/; seed and scope ${TWIN}.`,
    lore_access: { ...packet.lore_access, traversal_policy: { ...packet.lore_access.traversal_policy!, allowed_prefixes: ['SectionLore:Twins/'], required_seed_refs: [TWIN] }, allowed_scope: [TWIN] },
    hidden_context_audit: { ...packet.hidden_context_audit, omitted_context_refs: [`${TWIN}#Sealed Accord`] },
  } as ResponderPacket;

  it('hides every section of that name (fail closed), not only the first a heading link opens', () => {
    const compiled = compilePolicy(twinPacket.lore_access.traversal_policy!, { index, packet: twinPacket });
    const pointer = '/hidden_context_audit/omitted_context_refs/0';
    expect(compiled.hidden).toEqual([]);
    expect(compiled.hidden_sections).toEqual([
      { path: 'Twins/Twin Accord.md', heading: 'Sealed Accord', line_start: 5, line_end: 7, chunks: [1], pointer },
      { path: 'Twins/Twin Accord.md', heading: 'Sealed Accord', line_start: 13, line_end: 15, chunks: [3], pointer },
    ]);
    expect(compiled.receipt.find((r) => r.kind === 'hidden_ref')).toMatchObject({
      clause: `${TWIN}#Sealed Accord`, disposition: 'enforced', matches: 1,
      rule: 'never consult the 2 sections headed "Sealed Accord" of Twins/Twin Accord.md (lines 5-7, chunk 1; lines 13-15, chunk 3): every heading of that name is withheld from search, links, traversal and reads; the rest of the note stays readable',
    });
  });

  it('a session reads the note with a marker for each, finds neither by search, and verify-trace refuses lines of the second', async () => {
    const t = tempDir('loretrace-twin-');
    try {
      const packetPath = join(t.dir, 'twin.packet.json');
      writeFileSync(packetPath, JSON.stringify(twinPacket, null, 2));
      const s = await fixtureSession({ ledgerPath: join(t.dir, 'twin.jsonl'), lore: VAULT, packetPath });
      try {
        const read = await s.call('lore_read', { ref: TWIN });
        expect(read.ok && read.result).toMatchObject({ data: { line_start: 1, line_end: 11, content: `${twin(1, 4)}\n${WITHHELD_MARKER}\n${twin(8, 12)}\n${WITHHELD_MARKER}`, withheld: true } });
        const found = await s.call('lore_search', { query: 'lanterns lamp oil sealed' });
        expect(found.ok && (found.result as { results: unknown[] }).results).toEqual([]);
        const second = await s.call('lore_read', { ref: TWIN, line_start: 11, line_end: 11 });
        expect(second.ok ? null : second.refusal.code).toBe('not_found');
      } finally {
        await s.close();
      }
      const compiled = compilePolicy(twinPacket.lore_access.traversal_policy!, { index, packet: twinPacket });
      const entry = (chunk: number, a: number, b: number) => ({
        trace_id: `trace.twin.${chunk}`, origin: 'runner_captured', query: 'q', source_ref: `${TWIN}#chunk${chunk}`,
        source_path: 'Twins/Twin Accord.md', chunk_index: chunk, line_start: a, line_end: b, extracted_constraint: twin(a, b), used_for: 'u',
      });
      const report = await verifyTrace(index, { policy_receipt: compiled.receipt, research_trace: [entry(2, 11, 11), entry(3, 15, 15)] } as never);
      // Without a ledger a verbatim entry is `unbacked` (its text verified); a line of the second section is refused.
      expect(report.entries.map((e) => [e.disposition, e.text_verified])).toEqual([['unbacked', true], ['policy_violation', false]]);
      expect(report.entries[1]!.detail!.split(':')[0]).toBe('Twins/Twin Accord.md is hidden lore (lines 13-15 are a hidden section)');
    } finally {
      t.cleanup();
    }
  });
});

/**
 * Hostile inputs to verifyTrace (src/receipts/verify-trace.ts), from the BREAKER reports (docs/RETRIEVE.md,
 * "Dispositions"): line and chunk numbers JSON cannot hold exactly (item 10), and hand-edited
 * runner_captured entries citing lore the document's own policy_receipt never admits (item 11:
 * `policy_violation`), checked against the receipt rows compilePolicy writes (src/policy/compile.ts).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { readNoteLines } from '../src/indexer/lookup.js';
import { sliceLines } from '../src/notes/lines.js';
import { checkPath, compilePolicy } from '../src/policy/compile.js';
import type { PolicyPacketContext } from '../src/policy/compile.js';
import { traverse } from '../src/traversal/traverse.js';
import { TRACE_DISPOSITIONS, verifyTrace } from '../src/receipts/verify-trace.js';
import type { ResearchTraceEntry, TraversalPolicy } from '../src/contracts/types.js';
import { exportLedger } from '../src/receipts/ledger-export.js';
import { main } from '../src/cli/main.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';
import { fixtureSession, R } from './helpers/proxy.js';

let tmp: string;
let index: VaultIndex;

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-hostile-trace-'));
  index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TRUTH = 'World/Pre-Elysium/Author Notes/Brinefall Truth.md';
const TRUTH_TEXT = 'Author-only: the blackout was staged by relay keepers paid to sink a rival convoy.\nNo character in the harbor era knows this.';
const RUMORS = 'World/Pre-Elysium-Extra/Dockside Rumors.md';
const VEIL = 'World/Post-Elysium/Veil Drive.md';
const VEIL_TEXT = "The veil drive folds a ship's path through still water, and no harbor can tax a crossing that takes no time.";
const NEUTRALITY = 'World/Politics/Harbor Neutrality.md';
const NEUTRALITY_TEXT = 'A neutral pier shelters any crew in a storm, regardless of flag or debt.';
const QUIET = 'World/Pre-Elysium/Factions/Movements/Quiet Hands.md';
const OATH = 'Care is counted in beds, air, food and repair hours, and no berth is promised that cannot be kept. ^oath';
const EXPECTED = 'expected runner_captured entries only from paths the policy admits';

/** The brinefall-intake policy of lore-fixtures/packets (allowed World/Pre-Elysium/ and World/Politics/, post-Elysium stop). */
const INTAKE: TraversalPolicy = {
  max_link_depth: 2,
  allowed_prefixes: ['FixtureLore:World/Pre-Elysium/', 'FixtureLore:World/Politics/'],
  required_seed_refs: ['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md'],
  follow_link_classes: ['wikilink'],
  stop_conditions: ['max_refs:5', 'stop before post-Elysium or future-outcome lore unless the packet explicitly requests it'],
};

/** A runner_captured entry for lines a-b of chunk `chunk` of `path`, with `text` as its constraint. */
function entry(id: string, path: string, chunk: number, a: number, b: number, text: string, over: Partial<ResearchTraceEntry> = {}): ResearchTraceEntry {
  return {
    trace_id: id,
    origin: 'runner_captured',
    query: 'hand-edited',
    source_ref: `FixtureLore:${path}#chunk${chunk}`,
    source_path: path,
    chunk_index: chunk,
    line_start: a,
    line_end: b,
    extracted_constraint: text,
    used_for: 'hand-edited entry',
    ...over,
  };
}

/** A real traverse result of `policy` (its receipt and its own trace), as `loretrace traverse --json` prints it. */
function traverseResult(policy: TraversalPolicy, packet?: PolicyPacketContext): Record<string, unknown> {
  const compiled = compilePolicy(policy, { index, ...(packet ? { packet } : {}) });
  return JSON.parse(JSON.stringify(traverse(index, compiled, { queries: ['blackout sanctuary berths'] }))) as Record<string, unknown>;
}

const zeroTotals = Object.fromEntries(TRACE_DISPOSITIONS.map((d) => [d, 0]));

describe('verifyTrace', () => {
  describe('line and chunk numbers (item 10)', () => {
    /** A hand-edited fragment: the entry's `field` written as the JSON literal `literal` (the text a reviewer sees). */
    const raw = (field: 'chunk_index' | 'line_start' | 'line_end', literal: string) => {
      const nums = { chunk_index: '0', line_start: '3', line_end: '3', [field]: literal };
      return JSON.parse(
        `{"research_trace":[{"trace_id":"T","origin":"runner_captured","query":"q","source_ref":"FixtureLore:${NEUTRALITY}#chunk0","source_path":"${NEUTRALITY}","chunk_index":${nums.chunk_index},"line_start":${nums.line_start},"line_end":${nums.line_end},"extracted_constraint":"x","used_for":"u"}]}`,
      ) as unknown;
    };

    it('refuses a chunk_index above 2^53-1 instead of printing a rounded number', async () => {
      await expect(verifyTrace(index, raw('chunk_index', '99999999999999999999'), { file: 't.json' })).rejects.toMatchObject({
        code: 'bad_trace_entry',
        message: 't.json: /research_trace/0/chunk_index must be an integer from 0 to 9007199254740991 (got 100000000000000000000, beyond 2^53-1: a JSON number that large is not held exactly)',
        details: { pointer: '/research_trace/0/chunk_index', expected: 'an integer from 0 to 9007199254740991', data: { field: 'chunk_index' } },
      });
    });

    it('refuses line_end 1e308 and a line_start that parses to Infinity', async () => {
      await expect(verifyTrace(index, raw('line_end', '1e308'), { file: 't.json' })).rejects.toMatchObject({
        code: 'bad_trace_entry',
        message: 't.json: /research_trace/0/line_end must be an integer from 1 to 9007199254740991 (got 1e+308, beyond 2^53-1: a JSON number that large is not held exactly)',
      });
      await expect(verifyTrace(index, raw('line_start', '1e309'), { file: 't.json' })).rejects.toMatchObject({
        code: 'bad_trace_entry',
        message: 't.json: /research_trace/0/line_start must be an integer from 1 to 9007199254740991 (got Infinity, beyond 2^53-1: a JSON number that large is not held exactly)',
      });
    });

    it('accepts 2^53-1 itself as a number (the location check then fails) and refuses 2^53', async () => {
      const report = await verifyTrace(index, raw('line_end', '9007199254740991'));
      expect(report.entries[0]?.disposition).toBe('out_of_range');
      expect(report.entries[0]?.detail).toBe(`lines 3-9007199254740991 are not inside ${NEUTRALITY}, which has 6 lines; expected 1 ≤ line_start ≤ line_end ≤ 6`);
      await expect(verifyTrace(index, raw('line_end', '9007199254740992'))).rejects.toMatchObject({
        code: 'bad_trace_entry',
        message: 'input: /research_trace/0/line_end must be an integer from 1 to 9007199254740991 (got 9007199254740992, beyond 2^53-1: a JSON number that large is not held exactly)',
      });
    });

    it('refuses non-integers, line numbers below 1 and a negative chunk_index, naming the field', async () => {
      await expect(verifyTrace(index, raw('line_start', '2.5'))).rejects.toMatchObject({
        code: 'bad_trace_entry',
        message: 'input: /research_trace/0/line_start must be an integer from 1 to 9007199254740991 (got 2.5)',
        details: { pointer: '/research_trace/0/line_start', data: { field: 'line_start' } },
      });
      await expect(verifyTrace(index, raw('line_start', '0'))).rejects.toMatchObject({
        message: 'input: /research_trace/0/line_start must be an integer from 1 to 9007199254740991 (got 0)',
      });
      await expect(verifyTrace(index, raw('chunk_index', '-1'))).rejects.toMatchObject({
        message: 'input: /research_trace/0/chunk_index must be an integer from 0 to 9007199254740991 (got -1)',
      });
      await expect(verifyTrace(index, raw('line_end', `"${'7'.repeat(5000)}"`))).rejects.toMatchObject({
        message: `input: /research_trace/0/line_end must be an integer from 1 to 9007199254740991 (got "${'7'.repeat(98)}…)`,
      });
    });
  });

  describe('policy_receipt (item 11)', () => {
    it('flags a hand-edited entry citing author-only lore and one outside the allowed prefixes as policy_violation', async () => {
      const doc = traverseResult(INTAKE);
      const own = (doc['research_trace'] as ResearchTraceEntry[]).length;
      const receipt = doc['policy_receipt'] as { kind: string; clause: string }[];
      expect(receipt.map((r) => r.kind)).toEqual([
        'max_link_depth', 'allowed_prefix', 'allowed_prefix', 'seed', 'follow_link_class', 'stop_condition', 'stop_condition', 'hidden_note', 'future_era_prefix',
      ]);
      (doc['research_trace'] as ResearchTraceEntry[]).push(
        entry('forged.truth', TRUTH, 0, 6, 7, TRUTH_TEXT),
        entry('forged.rumors', RUMORS, 0, 3, 3, 'Dockhands swear the relay keepers were paid.', { source_ref: `FixtureLore:${RUMORS}` }),
      );
      const report = await verifyTrace(index, doc, { file: 'forged.json' });
      expect(report.input_kind).toBe('traverse_result');
      expect(report.policy).toEqual({
        receipt: '/policy_receipt', rows: 9, checked: true,
        allowed_prefixes: ['World/Pre-Elysium/', 'World/Politics/'], deny_rows: 2,
      });
      const forged = report.entries.slice(own);
      expect(forged.map((e) => [e.pointer, e.trace_id, e.disposition, e.cause, e.similarity, e.detail])).toEqual([
        [`/research_trace/${own}`, 'forged.truth', 'policy_violation', null, null,
          `${TRUTH} is hidden lore: policy_receipt row /policy_receipt/7 (hidden_note "${TRUTH}") denies it; ${EXPECTED}`],
        [`/research_trace/${own + 1}`, 'forged.rumors', 'policy_violation', null, null,
          `${RUMORS} lies outside every allowed_prefix row of the policy_receipt (/policy_receipt/1 "FixtureLore:World/Pre-Elysium/", /policy_receipt/2 "FixtureLore:World/Politics/"); ${EXPECTED}`],
      ]);
      // The traverse result's own entries are checked for text; with no ledger behind them they are unbacked.
      expect(report.totals).toEqual({ ...zeroTotals, unbacked: own, policy_violation: 2 });
      expect(report.runner_captured).toEqual({ checked: own + 2, failed: own + 2, ledger_backed: 0 });
      expect(report.ok).toBe(false);
      // Without the receipt the same forged entries pass every location and text check.
      delete doc['policy_receipt'];
      const bare = await verifyTrace(index, doc);
      expect(bare.policy).toEqual({ receipt: null, rows: 0, checked: false, allowed_prefixes: [], deny_rows: 0 });
      expect(bare.entries.slice(own).map((e) => [e.disposition, e.text_verified])).toEqual([['unbacked', true], ['text_mismatch', false]]);
    });

    it('denies future-era lore unless an allowed prefix inside the era asks for it (waiver), as checkPath does', async () => {
      const doc = traverseResult(INTAKE);
      doc['research_trace'] = [entry('forged.veil', VEIL, 0, 3, 3, VEIL_TEXT)];
      const report = await verifyTrace(index, doc);
      expect(report.entries[0]?.detail).toBe(`${VEIL} is future-era lore: policy_receipt row /policy_receipt/8 (future_era_prefix "World/Post-Elysium/") denies it; ${EXPECTED}`);
      const waived = traverseResult({ ...INTAKE, allowed_prefixes: [...INTAKE.allowed_prefixes, `FixtureLore:${VEIL}`] });
      waived['research_trace'] = [entry('veil', VEIL, 0, 3, 3, VEIL_TEXT)];
      expect((await verifyTrace(index, waived)).entries.map((e) => [e.disposition, e.text_verified])).toEqual([['unbacked', true]]);
    });

    it('applies deny_prefix and deny_class stop conditions and hidden_context_audit refs written without .md', async () => {
      const policy: TraversalPolicy = {
        max_link_depth: 1,
        allowed_prefixes: ['FixtureLore:World/'],
        required_seed_refs: ['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md'],
        follow_link_classes: ['wikilink'],
        stop_conditions: ['deny_prefix:FixtureLore:World/Technology/', 'deny_class:movements'],
      };
      const doc = traverseResult(policy, { hidden_context_audit: { omitted_context_refs: ['FixtureLore:World/Politics/Harbor Neutrality'] } });
      const rows = (doc['policy_receipt'] as { kind: string; pointer: string }[]).map((r) => `${r.kind} ${r.pointer}`);
      expect(rows.slice(3)).toEqual(['follow_link_class /lore_access/traversal_policy/follow_link_classes/0', 'stop_condition /lore_access/traversal_policy/stop_conditions/0', 'stop_condition /lore_access/traversal_policy/stop_conditions/1', 'hidden_ref /hidden_context_audit/omitted_context_refs/0', 'hidden_note #/frontmatter/World~1Pre-Elysium~1Author Notes~1Brinefall Truth.md/visibility']);
      doc['research_trace'] = [
        entry('n', NEUTRALITY, 0, 3, 3, NEUTRALITY_TEXT),
        entry('q', QUIET, 1, 7, 7, OATH),
        entry('s', 'World/Technology/Signal Masking.md', 0, 1, 1, '# Signal Masking'),
      ];
      const report = await verifyTrace(index, doc);
      expect(report.policy.deny_rows).toBe(4);
      expect(report.entries.map((e) => e.detail)).toEqual([
        `${NEUTRALITY} is hidden lore: policy_receipt row /policy_receipt/6 (hidden_ref "FixtureLore:World/Politics/Harbor Neutrality") denies it; ${EXPECTED}`,
        `${QUIET} is a note of the denied class movements: policy_receipt row /policy_receipt/5 (stop_condition "deny_class:movements") denies it; ${EXPECTED}`,
        `World/Technology/Signal Masking.md is under the denied prefix World/Technology/: policy_receipt row /policy_receipt/4 (stop_condition "deny_prefix:FixtureLore:World/Technology/") denies it; ${EXPECTED}`,
      ]);
    });

    it('agrees with checkPath on every note of the vault, for the receipts of three policies', async () => {
      const policies: [TraversalPolicy, PolicyPacketContext | undefined][] = [
        [INTAKE, undefined],
        [{ ...INTAKE, allowed_prefixes: ['FixtureLore:World/', 'FixtureLore:Home.md'], stop_conditions: ['deny_prefix:FixtureLore:World/Technology/', 'deny_class:movements', 'stop before post-Elysium lore'] }, undefined],
        [{ ...INTAKE, allowed_prefixes: ['FixtureLore:World/Pre-Elysium/', `FixtureLore:${VEIL}`], stop_conditions: ['stop before post-Elysium lore'] }, { hidden_context_audit: { omitted_context_refs: ['FixtureLore:World/Pre-Elysium/Technology/'] } }],
      ];
      const counts: [number, number][] = [];
      for (const [policy, packet] of policies) {
        const compiled = compilePolicy(policy, { index, ...(packet ? { packet } : {}) });
        // World/ and Home.md (Edge/ holds parser edge cases such as an NFD file name, which are not about policy).
        const first = index.chunks.filter((c) => c.chunk_index === 0 && (c.path.startsWith('World/') || c.path === 'Home.md'));
        const trace: ResearchTraceEntry[] = [];
        for (const c of first) {
          const text = sliceLines(await readNoteLines(index, c.path), c.line_start, c.line_start);
          if (text.trim() === '') continue;
          trace.push(entry(c.path, c.path, 0, c.line_start, c.line_start, text));
        }
        const report = await verifyTrace(index, { research_trace: trace, decisions: [], stats: {}, policy_receipt: compiled.receipt });
        // Admitted by the receipt = not a policy_violation (these hand-made entries are unbacked: no ledger).
        const admitted = report.entries.map((e) => e.disposition !== 'policy_violation');
        expect(admitted).toEqual(trace.map((t) => checkPath(compiled, t.source_path).ok));
        counts.push([admitted.filter(Boolean).length, admitted.filter((a) => !a).length]);
      }
      expect(counts).toEqual([[14, 9], [15, 8], [11, 12]]);
    });

    it('holds every entry of a ledger export to the session receipt, whatever its origin: a hidden note is policy_violation', async () => {
      const ledgerPath = join(tmp, 'session.jsonl');
      const s = await fixtureSession({ ledgerPath });
      expect((await s.call('lore_read', { ref: `${R.territories}#chunk1` })).ok).toBe(true);
      await s.close();
      const exported = (await exportLedger(readFileSync(ledgerPath, 'utf8'), { index })) as unknown as Record<string, unknown>;
      const trace = exported['research_trace'] as ResearchTraceEntry[];
      trace.push(entry('forged.truth', TRUTH, 0, 6, 7, TRUTH_TEXT), entry('reported.truth', TRUTH, 0, 6, 7, TRUTH_TEXT, { origin: 'responder_reported' }));
      const report = await verifyTrace(index, exported, { file: 'lore_access.json', ledgers: [{ file: ledgerPath, text: readFileSync(ledgerPath, 'utf8') }] });
      expect(report.input_kind).toBe('capture_fragment');
      const rows = exported['policy_receipt'] as { kind: string }[];
      const hiddenRef = rows.findIndex((r) => r.kind === 'hidden_ref');
      expect(rows[hiddenRef]).toMatchObject({ clause: `FixtureLore:${TRUTH}`, pointer: '/hidden_context_audit/omitted_context_refs/0' });
      expect(report.entries.map((e) => [e.trace_id.replace(/^lt-[0-9a-f]{16}:2:[0-9a-f]{12}$/, '<ledger_id>:2:<hash>'), e.disposition])).toEqual([['<ledger_id>:2:<hash>', 'verified'], ['forged.truth', 'policy_violation'], ['reported.truth', 'policy_violation']]);
      expect(report.entries[1]?.detail).toBe(`${TRUTH} is hidden lore: policy_receipt row /policy_receipt/${hiddenRef} (hidden_ref "FixtureLore:${TRUTH}") denies it; ${EXPECTED}`);
      expect(report.entries[2]?.detail).toBe(`${TRUTH} is hidden lore: policy_receipt row /policy_receipt/${hiddenRef} (hidden_ref "FixtureLore:${TRUTH}") denies it; expected responder_reported entries, as every trace entry, only from paths the policy admits`);
      expect([report.totals.policy_violation, report.verdict]).toEqual([2, 'failed']);
      expect(report.runner_captured).toEqual({ checked: 2, failed: 1, ledger_backed: 1 });
    });

    it('keeps policy_violation (not drifted) when the vault snapshot changed', async () => {
      const doc = traverseResult(INTAKE);
      doc['snapshot_id'] = 'f'.repeat(64);
      doc['research_trace'] = [entry('forged.truth', TRUTH, 0, 6, 7, TRUTH_TEXT), entry('gone', 'World/Pre-Elysium/Gone.md', 0, 1, 1, 'x')];
      const report = await verifyTrace(index, doc);
      expect(report.entries.map((e) => [e.disposition, e.cause])).toEqual([['policy_violation', null], ['drifted', 'missing_file']]);
      expect(report.totals).toEqual({ ...zeroTotals, policy_violation: 1, drifted: 1 });
      expect(report.snapshot.holding).toEqual([]);
    });

    it('refuses a receipt that is not rows, has no allowed_prefix row, or names another vault', async () => {
      const doc = traverseResult(INTAKE);
      await expect(verifyTrace(index, { ...doc, policy_receipt: { rows: [] } }, { file: 'r.json' })).rejects.toMatchObject({
        code: 'bad_trace_input',
        message: 'r.json: /policy_receipt must be an array of policy receipt rows (got {"rows":[]})',
        details: { pointer: '/policy_receipt' },
      });
      const rows = doc['policy_receipt'] as Record<string, unknown>[];
      await expect(verifyTrace(index, { ...doc, policy_receipt: rows.filter((r) => r['kind'] !== 'allowed_prefix') }, { file: 'r.json' })).rejects.toMatchObject({
        code: 'bad_trace_input',
        message: 'r.json: /policy_receipt has 7 rows but no allowed_prefix row, so it admits nothing; expected the receipt of a compiled traversal_policy (one allowed_prefix row per allowed prefix)',
      });
      await expect(verifyTrace(index, { ...doc, policy_receipt: [rows[0], { ...rows[1], clause: 'AetheriaLore:World/' }] }, { file: 'r.json' })).rejects.toMatchObject({
        code: 'bad_trace_input',
        message: 'r.json: policy_receipt row /policy_receipt/1 (allowed_prefix) "AetheriaLore:World/" is not a valid lore ref: its namespace AetheriaLore is not this vault\'s (FixtureLore); expected the receipt of a policy compiled against vault FixtureLore',
        details: { pointer: '/policy_receipt/1' },
      });
      await expect(verifyTrace(index, { ...doc, policy_receipt: [rows[1], { kind: 'hidden_note' }] }, { file: 'r.json' })).rejects.toMatchObject({
        code: 'bad_trace_input',
        message: 'r.json: /policy_receipt/1 must be a policy receipt row with string clause, kind and disposition (got {"kind":"hidden_note"})',
      });
    });
  });
});

describe('loretrace verify-trace', () => {
  it('prints policy_violation for a hand-edited traverse result and exits 1', async () => {
    const doc = traverseResult(INTAKE);
    doc['research_trace'] = [entry('forged.truth', TRUTH, 0, 6, 7, TRUTH_TEXT)];
    const file = join(tmp, 'forged.json');
    writeFileSync(file, JSON.stringify(doc, null, 2));
    let out = '';
    const code = await main(['verify-trace', '--lore', FIXTURE_VAULT, file], { stdout: (t) => void (out += t), stderr: () => undefined, env: { LORETRACE_INDEX_DIR: join(tmp, 'index') }, cwd: tmp });
    expect(code).toBe(1);
    expect(out.split('\n').slice(1)).toEqual([
      '  snapshot: same as recorded',
      '  policy: entry paths checked against /policy_receipt (2 allowed_prefix rows, 2 deny rows)',
      '  ledger: none given; no runner_captured entry can be ledger-backed',
      `  policy_violation forged.truth (runner_captured) FixtureLore:${TRUTH}#chunk0 L6-L7 chunk 0`,
      `                 ${TRUTH} is hidden lore: policy_receipt row /policy_receipt/7 (hidden_note "${TRUTH}") denies it; ${EXPECTED}`,
      'totals: verified 0, text_mismatch 0, out_of_range 0, chunk_mismatch 0, missing_file 0, policy_violation 1, drifted 0, unverifiable 0, unbacked 0, ledger_mismatch 0, ledger_broken 0, ledger_untrusted 0, seed_not_consulted 0, claimed_not_read 0, ledger_not_closed 0, ledger_unsigned 0, ledger_untrusted_signer 0, ledger_signature_invalid 0',
      'runner_captured: 1 entry: 0 ledger-backed and verified, 1 failed — FAILED',
      '',
    ]);
  });

  it('recognises a BOM-prefixed proxy ledger as a ledger and says it starts with a byte-order mark', async () => {
    const ledgerPath = join(tmp, 'bom-session.jsonl');
    const s = await fixtureSession({ ledgerPath });
    await s.call('lore_read', { ref: `${R.territories}#chunk1` });
    await s.close();
    writeFileSync(ledgerPath, '\uFEFF' + readFileSync(ledgerPath, 'utf8'));
    let err = '';
    const code = await main(['verify-trace', '--lore', FIXTURE_VAULT, 'bom-session.jsonl'], { stdout: () => undefined, stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp, 'index') }, cwd: tmp });
    expect(code).toBe(1);
    expect(err).toBe(
      'loretrace: ledger bom-session.jsonl does not verify (first bad seq 0): line 1 (seq 0) starts with a byte-order mark (U+FEFF, bytes EF BB BF); a ledger is written without one — it was re-saved by an editor or converted; expected the first record\'s "{" as the first byte; nothing exported [ledger_invalid]\n',
    );
  });
});

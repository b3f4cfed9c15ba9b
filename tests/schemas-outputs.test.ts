/**
 * loretrace's own outputs against their schemas ("Schemas"): traverse result, policy receipt, capture
 * fragment, index manifest, proxy ledger record and coverage report — each carries a `schema_version`, all are
 * compiled once in the one Ajv 2020 instance of src/contracts/schemas.ts, and each is checked here on a real output
 * produced by the code that writes it (FixtureLore only, so nothing here needs ../shared).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { indexVault } from '../src/indexer/build.js';
import { buildPacket } from '../src/packet/build.js';
import { loadSchema, outputSchema, OUTPUT_SCHEMA_FILES, SCHEMAS_DIR } from '../src/contracts/schemas.js';
import type { OutputSchemaName } from '../src/contracts/schemas.js';
import type { TraversalPolicy } from '../src/contracts/types.js';
import { validateCaptureFragment } from '../src/contracts/validate.js';
import { compilePolicy, policyReceiptDocument } from '../src/policy/index.js';
import { DEFAULT_LIMITS, openProxySession } from '../src/proxy/index.js';
import { exportLedger } from '../src/receipts/index.js';
import { traverse, TRAVERSE_RESULT_VERSION } from '../src/traversal/traverse.js';
import { INDEX_SCHEMA_VERSION } from '../src/indexer/store.js';
import { LEDGER_SCHEMA_VERSION } from '../src/receipts/ledger.js';
import { COVERAGE_SCHEMA_VERSION } from '../src/coverage/types.js';
import { POLICY_RECEIPT_SCHEMA_VERSION } from '../src/policy/receipt.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURES, FIXTURE_VAULT, REPO } from './helpers/shared.js';

const DRAFT = join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json');
const CONTEXT = join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.projected-context.json');
const BRINEFALL_POLICY = join(FIXTURES, 'packets', 'brinefall-intake.policy.json');
const WORLD_POLICY = join(FIXTURES, 'policies', 'world-blackout.policy.json');
const BLACKOUT = 'World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md';

let tmp: string;
let index: VaultIndex;
beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'loretrace-schemas-outputs-'));
  index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
}, 60_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function json(file: string): unknown {
  return JSON.parse(readFileSync(file, 'utf8')) as unknown;
}

/** Validate and return the (pointer, keyword) pairs of the errors; [] when valid. */
function check(name: OutputSchemaName, value: unknown): string[][] {
  const fn = outputSchema(name);
  const ok = fn(JSON.parse(JSON.stringify(value)));
  return ok ? [] : (fn.errors ?? []).map((e) => [e.instancePath, e.keyword]);
}

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { LORETRACE_INDEX_DIR: join(tmp, 'index') }, cwd: REPO, isTTY: false });
  return { code, out, err };
}

describe('outputSchema', () => {
  it('compiles each of the eight output schemas once, each requiring its own schema_version', () => {
    const versions: Record<string, unknown> = {};
    for (const name of Object.keys(OUTPUT_SCHEMA_FILES) as OutputSchemaName[]) {
      expect(outputSchema(name)).toBe(outputSchema(name));
      const schema = JSON.parse(readFileSync(join(SCHEMAS_DIR, OUTPUT_SCHEMA_FILES[name]), 'utf8')) as {
        $schema: string; required?: string[]; properties?: { schema_version?: { const?: unknown; enum?: unknown[] } };
      };
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      if (name === 'capture_fragment') continue; // a fragment copies into a capture's lore_access: no version field there
      expect(schema.required).toContain('schema_version');
      // The ledger schema reads two versions (v1 is still verified) and writes the last one.
      versions[name] = schema.properties?.schema_version?.const ?? schema.properties?.schema_version?.enum?.at(-1);
    }
    expect(versions).toEqual({
      traverse_result: 'loretrace.traverse_result.v1',
      policy_receipt: 'loretrace.policy_receipt.v1',
      index_manifest: INDEX_SCHEMA_VERSION,
      ledger_record: LEDGER_SCHEMA_VERSION,
      coverage_report: COVERAGE_SCHEMA_VERSION,
      lock: 'loretrace.lock.v1',
      retrieve_batch: 'loretrace.retrieve_batch.v1',
    });
    expect([TRAVERSE_RESULT_VERSION, POLICY_RECEIPT_SCHEMA_VERSION, LEDGER_SCHEMA_VERSION, COVERAGE_SCHEMA_VERSION]).toEqual([
      'loretrace.traverse_result.v1', 'loretrace.policy_receipt.v1', 'loretrace.ledger.v4', 'loretrace.coverage_report.v2',
    ]);
    expect(loadSchema('capture-fragment').$id).toBe('https://loretrace.dev/schemas/capture-fragment.schema.json');
  });

  it('accepts a traverse result of the world policy and refuses one with another schema_version', () => {
    const r = traverse(index, compilePolicy(json(WORLD_POLICY) as TraversalPolicy, { index }), { queries: ['sanctuary capacity'] });
    expect(check('traverse_result', r)).toEqual([]);
    expect(check('traverse_result', { ...r, schema_version: 'loretrace.traverse_result.v0' })).toEqual([['/schema_version', 'const']]);
  });

  it('accepts the standalone policy receipt and the receipt printed by traverse --receipt-only --json', async () => {
    const doc = policyReceiptDocument(compilePolicy(json(WORLD_POLICY) as TraversalPolicy, { index }), 'policies/world-blackout.policy.json');
    expect(check('policy_receipt', doc)).toEqual([]);
    expect(doc.totals).toEqual({ enforced: 11, partially_enforced: 4, advisory: 1 });
    expect(doc.rows.length).toBe(16);
    expect(check('policy_receipt', { ...doc, totals: { enforced: 11, advisory: 1 } })).toEqual([['/totals', 'required']]);
    const r = await cli(['traverse', '--lore', FIXTURE_VAULT, '--policy', WORLD_POLICY, '--receipt-only', '--json']);
    expect(r.code).toBe(0);
    const printed = JSON.parse(r.out) as typeof doc;
    expect(Object.keys(printed)).toEqual(['schema_version', 'namespace', 'snapshot_id', 'source', 'totals', 'rows']);
    expect(printed).toEqual({ ...doc, source: WORLD_POLICY });
    expect(check('policy_receipt', printed)).toEqual([]);
  });

  it('prints the receipt for humans with --receipt-only and walks nothing', async () => {
    const r = await cli(['traverse', '--lore', FIXTURE_VAULT, '--policy', WORLD_POLICY, '--receipt-only']);
    expect(r.code).toBe(0);
    const lines = r.out.split('\n');
    expect(lines[2]).toBe('Policy receipt (11 enforced, 4 partially enforced, 1 advisory):');
    expect(lines[3]).toBe('  enforced  /max_link_depth  2');
    expect(r.out).not.toContain('Consulted (');
  });

  it('accepts the index manifest written by indexVault', () => {
    expect(check('index_manifest', json(join(tmp, 'index', 'index.json')))).toEqual([]);
  });

  it('accepts every record of a proxy ledger and the fragment ledger export writes', async () => {
    const built = await buildPacket(index, json(DRAFT), { lane: 'responder_scoped_repository_search', policy: json(BRINEFALL_POLICY) as TraversalPolicy });
    const packetPath = join(tmp, 'research.packet.json');
    writeFileSync(packetPath, JSON.stringify(built.packet, null, 2) + '\n');
    const ledgerPath = join(tmp, 'session.ledger.jsonl');
    const session = await openProxySession({ lore: FIXTURE_VAULT, packetPath, ledgerPath, limits: DEFAULT_LIMITS, indexOptions: { indexDir: join(tmp, 'index') } });
    expect((await session.call('lore_read', { ref: `FixtureLore:${BLACKOUT}#chunk1` })).ok).toBe(true);
    await session.close();
    const text = readFileSync(ledgerPath, 'utf8');
    const records = text.trimEnd().split('\n').map((l) => JSON.parse(l) as { kind: string; schema_version: string });
    expect(records.map((r) => r.kind)).toEqual(['SESSION_OPENED', 'TOOL_CALL', 'TOOL_RESULT', 'SESSION_CLOSED']);
    for (const rec of records) expect(check('ledger_record', rec)).toEqual([]);
    // The v1 fixture ledger is still a valid record of the schema, and a v2 record with v1 kinds is not.
    for (const line of readFileSync(join(FIXTURES, 'artifacts', 'ledger.harbor.jsonl'), 'utf8').trimEnd().split('\n')) expect(check('ledger_record', JSON.parse(line))).toEqual([]);
    expect(check('ledger_record', { ...records[2], kind: 'tool_call' })).toEqual([['/kind', 'enum'], ['', 'if']]);
    // The v2 records written before TOOL_CALL are still valid records of the schema.
    for (const line of readFileSync(join(FIXTURES, 'ledgers', 'ledger.ilse.v2.jsonl'), 'utf8').trimEnd().split('\n')) expect(check('ledger_record', JSON.parse(line))).toEqual([]);
    // A lore_read that escaped invisible characters carries escaped_characters in its v2 outcome: counts and
    // known kinds only, and only when some were escaped.
    const escaped = (e: unknown) => check('ledger_record', { ...records[2], outcome: { ...(records[2] as any).outcome, escaped_characters: e } });
    expect(escaped({ count: 7, kinds: ['tag_block', 'zero_width'] })).toEqual([]);
    const zero = escaped({ count: 0, kinds: [] });
    expect(zero).toContainEqual(['/outcome/escaped_characters/count', 'minimum']);
    expect(zero).toContainEqual(['/outcome/escaped_characters/kinds', 'minItems']);
    expect(escaped({ count: 1, kinds: ['emoji'] })).toContainEqual(['/outcome/escaped_characters/kinds/0', 'enum']);
    const fragment = await exportLedger(text, { file: ledgerPath, index });
    expect(check('capture_fragment', fragment)).toEqual([]);
    expect(validateCaptureFragment(fragment, { file: 'ledger export' })).toEqual({ file: 'ledger export', kind: 'capture-fragment', valid: true, errors: [], warnings: [] });
  });

  it('accepts the coverage report written by loretrace coverage', async () => {
    const r = await cli(['coverage', '--lore', FIXTURE_VAULT, join(FIXTURES, 'artifacts'), '--out', join(tmp, 'coverage'), '--index-dir', join(tmp, 'index')]);
    expect(r.code).toBe(1); // lore-fixtures/artifacts cite on purpose a snapshot that is not the vault's: stale citations
    expect(r.out).toContain(`wrote ${join(tmp, 'coverage', 'coverage.json')}\n`);
    expect(check('coverage_report', json(join(tmp, 'coverage', 'coverage.json')))).toEqual([]);
  });

  it('accepts the capture fragment written by retrieve --capture-out', async () => {
    const frag = join(tmp, 'lore_access.json');
    const r = await cli(['retrieve', '--lore', FIXTURE_VAULT, '--packet', DRAFT, '--projected-context', CONTEXT, '--policy', BRINEFALL_POLICY,
      '--lane', 'coordinator_scoped_retrieval', '--out', join(tmp, 'coordinator.packet.json'), '--capture-out', frag]);
    expect(r.code).toBe(0);
    expect(check('capture_fragment', json(frag))).toEqual([]);
    const v = await cli(['validate', 'capture-fragment', frag]);
    expect(v).toEqual({ code: 0, out: `${frag}: ok\n1 capture-fragment: 1 valid, 0 invalid; 0 errors; 0 warnings\n`, err: '' });
  });
});

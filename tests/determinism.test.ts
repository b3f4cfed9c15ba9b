/**
 * README "What is deterministic": the same inputs give a byte-identical packet without SOURCE_DATE_EPOCH,
 * while the receipts carry the time of the run — every ledger record's `occurred_on` is inside its
 * `record_hash` (seed 004 hashes the whole record), the `ledger_id` hashes the opening record, and each
 * fragment `trace_id` names one record by its hash — so the ledger, the `--capture-out` fragment and the
 * lock differ from run to run, and differ in exactly those time-bound values: mapping run B's ledger id,
 * record times, record hashes (and their 12-digit prefixes) and the two files' sha256 onto run A's makes
 * every byte equal (the fragment and the lock hold no time of their own). With SOURCE_DATE_EPOCH all four files
 * are byte-identical.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { FIXTURE_VAULT, REPO } from './helpers/shared.js';

const T = mkdtempSync(join(tmpdir(), 'lt-determinism-'));
const PACKETS = 'lore-fixtures/packets';

/** One coordinator-lane retrieve into `T/<dir>/`; returns the four files it wrote, as text. */
async function retrieveInto(dir: string, env: Record<string, string>): Promise<Record<'packet' | 'ledger' | 'fragment' | 'lock', string>> {
  const at = (name: string) => join(T, dir, name);
  const code = await main([
    'retrieve', '--lore', FIXTURE_VAULT, '--index-dir', join(T, 'index'),
    '--packet', `${PACKETS}/brinefall-intake.turn-01.mara-voss.draft.packet.json`,
    '--projected-context', `${PACKETS}/brinefall-intake.turn-01.mara-voss.projected-context.json`,
    '--policy', `${PACKETS}/brinefall-intake.policy.json`,
    '--out', at('p.json'), '--capture-out', at('f.json'),
  ], { stdout: () => {}, stderr: () => {}, env, cwd: REPO, isTTY: false });
  expect(code).toBe(0);
  return { packet: readFileSync(at('p.json'), 'utf8'), ledger: readFileSync(at('p.ledger.jsonl'), 'utf8'), fragment: readFileSync(at('f.json'), 'utf8'), lock: readFileSync(at('p.lock.json'), 'utf8') };
}

/** A run's ledger records. */
const recordsOf = (ledger: string) => ledger.trimEnd().split('\n').map((l) => JSON.parse(l) as { ledger_id: string; occurred_on: string; record_hash: string });

/** The time-bound values of a run other than the times: its ledger id, each record's hash and hash prefix, and the two files' sha256 (each unique). */
function timeBound(run: Record<string, string>): string[] {
  const sha = (t: string) => createHash('sha256').update(t, 'utf8').digest('hex');
  const records = recordsOf(run.ledger!);
  return [records[0]!.ledger_id, ...records.flatMap((r) => [r.record_hash, r.record_hash.slice(0, 12)]), sha(run.ledger!), sha(run.fragment!)];
}

describe('retrieve without SOURCE_DATE_EPOCH', () => {
  it('writes a byte-identical packet; the receipts differ only in their time-bound values', async () => {
    const a = await retrieveInto('a', {});
    const b = await retrieveInto('b', {});
    expect(b.packet).toBe(a.packet);
    expect([b.ledger === a.ledger, b.fragment === a.fragment, b.lock === a.lock]).toEqual([false, false, false]);
    const [fromB, toA] = [timeBound(b), timeBound(a)];
    const mapped = (text: string) => fromB.reduce((t, v, i) => t.split(v).join(toA[i]!), text);
    // Times repeat within a run (records written in the same millisecond), so each record's is mapped on its own line.
    const timesA = recordsOf(a.ledger).map((r) => r.occurred_on);
    const ledgerB = b.ledger.trimEnd().split('\n').map((line, i) => line.replace(`"occurred_on":"${recordsOf(b.ledger)[i]!.occurred_on}"`, `"occurred_on":"${timesA[i]}"`)).join('\n') + '\n';
    expect({ ledger: mapped(ledgerB), fragment: mapped(b.fragment), lock: mapped(b.lock) }).toEqual({ ledger: a.ledger, fragment: a.fragment, lock: a.lock });
  });
});

describe('retrieve with SOURCE_DATE_EPOCH', () => {
  it('writes all four files byte-identical', async () => {
    const env = { SOURCE_DATE_EPOCH: '1735689600' };
    const a = await retrieveInto('c', env);
    const b = await retrieveInto('d', env);
    expect(b).toEqual(a);
    expect(JSON.parse(a.ledger.split('\n', 1)[0]!).occurred_on).toBe('2025-01-01T00:00:00.000Z');
  });
});

/**
 * Helpers for the proxy tests: the FixtureLore research packet, temp folders, a session on
 * the fixture vault with a deterministic clock, and small ledger readers.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openProxySession } from '../../src/proxy/session.js';
import type { ProxyClock, ProxySession } from '../../src/proxy/session.js';
import type { ServerLimits } from '../../src/proxy/limits.js';
import { DEFAULT_LIMITS } from '../../src/proxy/limits.js';
import type { LedgerRecord } from '../../src/receipts/ledger.js';
import type { LedgerSigner } from '../../src/receipts/signing.js';
import { FIXTURES, FIXTURE_VAULT, REPO } from './shared.js';

export const PROXY_PACKET = join(FIXTURES, 'packets', 'proxy-fixture-research.packet.json');
export const PROXY_PACKET_ID = 'proxy-fixture.brinefall-berths.dock_warden_ilse.packet.research.v0';
export const BIN = join(REPO, 'bin', 'loretrace.js');
export { FIXTURE_VAULT };

/** Refs of the FixtureLore world used across the proxy tests. */
export const R = {
  territories: 'FixtureLore:World/Pre-Elysium/Territories.md',
  factions: 'FixtureLore:World/Pre-Elysium/Factions/index.md',
  preIndex: 'FixtureLore:World/Pre-Elysium/index.md',
  blackout: 'FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md',
  kestrel: 'FixtureLore:World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md',
  meridian: 'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md',
  quietHands: 'FixtureLore:World/Pre-Elysium/Factions/Movements/Quiet Hands.md',
  neutrality: 'FixtureLore:World/Politics/Harbor Neutrality.md',
  veilDrive: 'FixtureLore:World/Post-Elysium/Veil Drive.md',
  truth: 'FixtureLore:World/Pre-Elysium/Author Notes/Brinefall Truth.md',
  rumors: 'FixtureLore:World/Pre-Elysium-Extra/Dockside Rumors.md',
  home: 'FixtureLore:Home.md',
} as const;

/** A fresh temp folder (removed by the returned cleanup). */
export function tempDir(prefix = 'loretrace-proxy-'): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/**
 * A deterministic clock: `now()` starts at 2025-01-01T00:00:00Z and advances one second per call;
 * `monotonic()` returns `ms.value` (tests move it to refill the rate limiter).
 */
export function fakeClock(): ProxyClock & { ms: { value: number } } {
  let t = Date.UTC(2025, 0, 1);
  const ms = { value: 0 };
  return {
    ms,
    now: () => {
      const d = new Date(t);
      t += 1000;
      return d;
    },
    monotonic: () => ms.value,
  };
}

/** Open a session on FixtureLore with the proxy packet (in-memory index, deterministic clock). */
export async function fixtureSession(options: { ledgerPath: string; limits?: Partial<ServerLimits>; clock?: ProxyClock; lore?: string; packetPath?: string; signer?: LedgerSigner | null } ): Promise<ProxySession> {
  return openProxySession({
    lore: options.lore ?? FIXTURE_VAULT,
    packetPath: options.packetPath ?? PROXY_PACKET,
    ledgerPath: options.ledgerPath,
    limits: { ...DEFAULT_LIMITS, ...(options.limits ?? {}) },
    indexOptions: { persist: false, workers: false },
    clock: options.clock ?? fakeClock(),
    signer: options.signer ?? null,
  });
}

/** The records of a ledger file. */
export function readLedger(path: string): LedgerRecord[] {
  return readFileSync(path, 'utf8').split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as LedgerRecord);
}

/**
 * The outcome records (`TOOL_RESULT`, `TOOL_REFUSED`) of a v3 ledger's records, each with the `arguments`
 * of the `TOOL_CALL` it names (`call_record_id`) — one entry per call, as a v2 ledger held them.
 */
export function outcomes(records: readonly LedgerRecord[]): LedgerRecord[] {
  const calls = new Map(records.filter((r) => r.kind === 'TOOL_CALL').map((r) => [r.record_id, r]));
  return records
    .filter((r) => r.kind === 'TOOL_RESULT' || r.kind === 'TOOL_REFUSED')
    .map((r) => ({ ...r, arguments: calls.get(r.call_record_id ?? '')?.arguments }));
}

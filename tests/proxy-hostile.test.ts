/**
 * Hostile inputs ("Enforcement"): each is refused with its code, nothing outside the index is opened
 * (fs spies plus a canary file outside the vault whose text must never appear), and the ledger holds the
 * refusal. Runs on a temp copy of FixtureLore with a symlink out of the vault, a symlink into a denied folder,
 * a hard link to the canary, a FIFO named `.md`, and two notes swapped for a symlink / a FIFO after indexing.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { cpSync, linkSync, mkdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { ProxyResponse, ProxySession } from '../src/proxy/session.js';
import { verifyLedger } from '../src/receipts/ledger.js';
import { FIXTURE_VAULT, PROXY_PACKET, R, fakeClock, fixtureSession, outcomes, readLedger, tempDir } from './helpers/proxy.js';

const CANARY_TEXT = 'CANARY-7f3a: this text lives outside the vault';
let tmp: { dir: string; cleanup: () => void };
let vault: string;
let canary: string;
let ledger: string;
let session: ProxySession;
const clock = fakeClock();

const pre = (name: string) => `FixtureLore:World/Pre-Elysium/${name}`;

beforeAll(async () => {
  tmp = tempDir('loretrace-hostile-');
  vault = join(tmp.dir, 'FixtureLore');
  cpSync(FIXTURE_VAULT, vault, { recursive: true });
  mkdirSync(join(tmp.dir, 'outside'));
  canary = join(tmp.dir, 'outside', 'secret.md');
  writeFileSync(canary, `# Secret\n\n${CANARY_TEXT}\n`);
  const p = (name: string) => join(vault, 'World', 'Pre-Elysium', name);
  symlinkSync(canary, p('Outside Link.md'));
  symlinkSync('../Post-Elysium/Veil Drive.md', p('Future Link.md'));
  linkSync(canary, p('Hard Link.md'));
  execFileSync('mkfifo', [p('Pipe.md')]);
  writeFileSync(p('Swap Symlink.md'), '# Swap Symlink\n\nAn ordinary note at index time.\n');
  writeFileSync(p('Swap Fifo.md'), '# Swap Fifo\n\nAn ordinary note at index time.\n');
  writeFileSync(p('Swap Hard Link.md'), '# Swap Hard Link\n\nAn ordinary note at index time.\n');
  writeFileSync(p('Cafe\u0301 Dock.md'), '# Café Dock\n\nA note whose file name is NFD on disk.\n');
  // A packet variant whose allowed_scope names every planted file (so only the file checks stand in the way).
  const packet = JSON.parse(readFileSync(PROXY_PACKET, 'utf8'));
  const extra = ['Outside Link.md', 'Future Link.md', 'Hard Link.md', 'Pipe.md', 'Swap Symlink.md', 'Swap Fifo.md', 'Swap Hard Link.md', 'Caf\u00e9 Dock.md'].map(pre);
  packet.lore_access.allowed_scope.push(...extra);
  packet.packet_prompt_text += '\n' + extra.map((e: string) => `- ${e}`).join('\n');
  const packetPath = join(tmp.dir, 'hostile.packet.json');
  writeFileSync(packetPath, JSON.stringify(packet, null, 2));
  ledger = join(tmp.dir, 'hostile.jsonl');
  session = await fixtureSession({ ledgerPath: ledger, lore: vault, packetPath, clock });
  // Swap two indexed notes after the session started.
  rmSync(p('Swap Symlink.md'));
  symlinkSync(canary, p('Swap Symlink.md'));
  renameSync(p('Swap Fifo.md'), join(tmp.dir, 'outside', 'old-fifo.md'));
  execFileSync('mkfifo', [p('Swap Fifo.md')]);
  linkSync(p('Swap Hard Link.md'), join(tmp.dir, 'outside', 'second-name.md'));
});

afterAll(async () => {
  await session.close();
  vi.restoreAllMocks();
  tmp.cleanup();
});

/** Paths handed to the fs functions that open or read files, while `fn` runs. */
async function opened<T = ProxyResponse>(fn: () => Promise<T>): Promise<{ response: T; paths: string[] }> {
  const paths: string[] = [];
  const record = (p: unknown) => paths.push(String(p));
  const origOpen = fs.promises.open.bind(fs.promises);
  const origReadFile = fs.promises.readFile.bind(fs.promises);
  const origOpenSync = fs.openSync;
  const origReadFileSync = fs.readFileSync;
  const spies = [
    vi.spyOn(fs.promises, 'open').mockImplementation((async (p: fs.PathLike, ...rest: unknown[]) => {
      record(p);
      return (origOpen as (...a: unknown[]) => Promise<fs.promises.FileHandle>)(p, ...rest);
    }) as typeof fs.promises.open),
    vi.spyOn(fs.promises, 'readFile').mockImplementation((async (p: fs.PathLike, ...rest: unknown[]) => {
      record(p);
      return (origReadFile as (...a: unknown[]) => Promise<Buffer>)(p, ...rest);
    }) as typeof fs.promises.readFile),
    vi.spyOn(fs, 'openSync').mockImplementation(((p: fs.PathLike, ...rest: unknown[]) => {
      record(p);
      return (origOpenSync as (...a: unknown[]) => number)(p, ...rest);
    }) as typeof fs.openSync),
    vi.spyOn(fs, 'readFileSync').mockImplementation(((p: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
      record(p);
      return (origReadFileSync as (...a: unknown[]) => Buffer)(p, ...rest);
    }) as typeof fs.readFileSync),
  ];
  try {
    const response = await fn();
    return { response, paths };
  } finally {
    for (const s of spies) s.mockRestore();
  }
}

const HOSTILE: { name: string; tool: 'lore_read' | 'lore_follow' | 'lore_search'; args: Record<string, unknown>; code: string; reason: string }[] = [
  { name: '`..` segment', tool: 'lore_read', args: { ref: pre('../Post-Elysium/Veil Drive.md') }, code: 'bad_ref', reason: 'bad_ref' },
  { name: '%2e%2e%2f', tool: 'lore_read', args: { ref: pre('%2e%2e%2fPost-Elysium/Veil Drive.md') }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'double-encoded %252e', tool: 'lore_read', args: { ref: pre('%252e%252e%252fPost-Elysium/Veil Drive.md') }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'backslashes', tool: 'lore_read', args: { ref: 'FixtureLore:World\\Post-Elysium\\Veil Drive.md' }, code: 'bad_ref', reason: 'bad_ref' },
  { name: '%5C', tool: 'lore_read', args: { ref: pre('..%5C..%5CHome.md') }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'absolute path', tool: 'lore_read', args: { ref: '/etc/passwd' }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'absolute path after the namespace', tool: 'lore_read', args: { ref: 'FixtureLore:/etc/passwd' }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'drive letter', tool: 'lore_read', args: { ref: 'C:/Windows/win.ini' }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'UNC path', tool: 'lore_read', args: { ref: '\\\\server\\share\\secret.md' }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'UNC path with slashes', tool: 'lore_read', args: { ref: '//server/share/secret.md' }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'file:// URL', tool: 'lore_read', args: { ref: "file:///etc/passwd" }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'NUL', tool: 'lore_read', args: { ref: `${R.territories}\u0000.png` }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'control character', tool: 'lore_read', args: { ref: `${R.territories}\u001b[2J` }, code: 'bad_ref', reason: 'bad_ref' },
  { name: 'newline inside a ref', tool: 'lore_read', args: { ref: `${R.territories}\n${R.veilDrive}` }, code: 'bad_ref', reason: 'bad_ref' },
  // Look-alike separators name no folder of the allowed prefixes: "not yours", whatever exists (no such note).
  { name: 'fullwidth solidus', tool: 'lore_read', args: { ref: 'FixtureLore:World／Post-Elysium／Veil Drive.md' }, code: 'out_of_scope', reason: 'not_found' },
  { name: 'division slash look-alike', tool: 'lore_read', args: { ref: 'FixtureLore:World\u2215Pre-Elysium\u2215Territories.md' }, code: 'out_of_scope', reason: 'not_found' },
  { name: 'NFD spelling of an NFC name (same answer as NFC)', tool: 'lore_read', args: { ref: 'FixtureLore:Edge/Cafe\u0301 Noir.md' }, code: 'out_of_scope', reason: 'prefix_denied' },
  { name: 'NFD spelling of a hidden name', tool: 'lore_read', args: { ref: R.truth.normalize('NFD') }, code: 'not_found', reason: 'hidden_ref' },
  { name: 'sibling folder sharing a prefix name', tool: 'lore_read', args: { ref: R.rumors }, code: 'out_of_scope', reason: 'prefix_denied' },
  { name: 'symlink pointing outside the vault', tool: 'lore_read', args: { ref: pre('Outside Link.md') }, code: 'not_found', reason: 'not_found' },
  { name: 'symlink into a denied folder', tool: 'lore_read', args: { ref: pre('Future Link.md') }, code: 'not_found', reason: 'not_found' },
  { name: 'hard-linked file (never indexed: finding hard_link)', tool: 'lore_read', args: { ref: pre('Hard Link.md') }, code: 'not_found', reason: 'not_found' },
  { name: 'indexed note hard-linked after indexing', tool: 'lore_read', args: { ref: pre('Swap Hard Link.md') }, code: 'not_found', reason: 'hard_link' },
  { name: 'FIFO named .md', tool: 'lore_read', args: { ref: pre('Pipe.md') }, code: 'not_found', reason: 'not_found' },
  { name: 'indexed note swapped for a symlink', tool: 'lore_read', args: { ref: pre('Swap Symlink.md') }, code: 'not_found', reason: 'symlink' },
  { name: 'indexed note swapped for a FIFO', tool: 'lore_read', args: { ref: pre('Swap Fifo.md') }, code: 'not_found', reason: 'not_regular_file' },
  { name: 'heading fragment of regex metacharacters (matched literally)', tool: 'lore_read', args: { ref: `${R.territories}#.*(Shelf|Reach)[^x]+$` }, code: 'not_found', reason: 'fragment_not_found' },
  { name: 'hostile follow target', tool: 'lore_follow', args: { from_ref: R.territories, target: '../Post-Elysium/Veil Drive' }, code: 'bad_ref', reason: 'bad_ref' },
  { name: '1 MB query', tool: 'lore_search', args: { query: 'harbor '.repeat(150_000) }, code: 'bad_request', reason: 'query_too_long' },
];

describe('ProxySession.call with hostile input', () => {
  it.each(HOSTILE)('refuses $name with $code, opens nothing and records the refusal', async ({ tool, args, code, reason }) => {
    const { response, paths } = await opened(() => session.call(tool, args));
    expect(response.ok).toBe(false);
    if (response.ok) return;
    expect(response.refusal.code).toBe(code);
    expect(paths).toEqual([]);
    expect(JSON.stringify(response)).not.toContain('CANARY');
    const rec = readLedger(ledger)[response.seq]!;
    expect(rec.tool).toBe(tool);
    expect(rec.outcome).toMatchObject({ status: 'refused', code, reason });
  });

  it('opens exactly the indexed file for an admitted read (the spies see real opens)', async () => {
    const { response, paths } = await opened(() => session.call('lore_read', { ref: `${R.territories}#chunk0` }));
    expect(response.ok ? 'ok' : readLedger(ledger)[response.seq]!.outcome).toBe('ok');
    expect(paths).toEqual([join(vault, 'World', 'Pre-Elysium', 'Territories.md')]);
  });

  it('reads a note stored under an NFD file name through its NFC ref, and answers its NFD spelling the same', async () => {
    const nfc = await session.call('lore_read', { ref: pre('Caf\u00e9 Dock.md') });
    const nfd = await session.call('lore_read', { ref: pre('Cafe\u0301 Dock.md') });
    expect(nfc.ok ? (nfc.result as any).data.content : nfc.refusal).toBe('# Café Dock\n\nA note whose file name is NFD on disk.');
    expect(nfd.ok ? (nfd.result as any).data.path : nfd.refusal).toBe('World/Pre-Elysium/Caf\u00e9 Dock.md');
  });

  it('answers the NFD and NFC spellings of a name identically', async () => {
    const nfc = await session.call('lore_read', { ref: 'FixtureLore:Edge/Café Noir.md' });
    const nfd = await session.call('lore_read', { ref: 'FixtureLore:Edge/Café Noir.md'.normalize('NFD') });
    expect(nfc.ok || nfd.ok).toBe(false);
    if (nfc.ok || nfd.ok) return;
    expect(nfd.refusal.code).toBe(nfc.refusal.code);
  });

  it('refuses most of a burst of 10,000 calls with rate_limited, opens nothing and records every one', async () => {
    clock.ms.value += 60_000;
    const before = readLedger(ledger).length;
    const { response: all, paths } = await opened(() =>
      Promise.all(Array.from({ length: 10_000 }, (_, i) => session.call(i % 2 === 0 ? 'research_status' : 'lore_read', i % 2 === 0 ? {} : { ref: pre('Outside Link.md') }))));
    const codes = all.map((r) => (r.ok ? 'ok' : r.refusal.code));
    expect(session.limits.rate_burst).toBe(120);
    // The first 120 calls pass the rate limiter: 60 research_status results and 60 not_found reads of the symlink.
    expect(codes.slice(0, 120)).toEqual(Array.from({ length: 120 }, (_, i) => (i % 2 === 0 ? 'ok' : 'not_found')));
    expect(codes.slice(120)).toEqual(Array(10_000 - 120).fill('rate_limited'));
    expect(paths).toEqual([]);
    const records = readLedger(ledger);
    // Every call is recorded: its TOOL_CALL and its outcome.
    expect(records.length).toBe(before + 20_000);
    const answered = outcomes(records.slice(before));
    expect(answered.length).toBe(10_000);
    expect(answered.slice(120).every((r) => r.outcome!.status === 'refused' && (r.outcome as any).reason === 'rate_limited')).toBe(true);
    expect(records[before + 19_999]!.seq).toBe(all[9_999]!.seq);
  });

  it('leaves the canary untouched by every response and the ledger, and the chain verifies', async () => {
    const text = readFileSync(ledger, 'utf8');
    expect(text).not.toContain('CANARY');
    const report = await verifyLedger(text);
    expect(report.valid).toBe(true);
    // The packet asked for the planted files; the ones the scan skipped (symlinks, FIFO, hard link) were never admitted.
    const start = readLedger(ledger)[0]!.session!;
    expect(start.admitted.map((a) => a.path)).not.toContain('World/Pre-Elysium/Hard Link.md');
    expect(start.admitted.map((a) => a.path)).toContain('World/Pre-Elysium/Swap Hard Link.md');
    expect(start.admitted.map((a) => a.path)).not.toContain('World/Pre-Elysium/Outside Link.md');
    expect(start.admitted.map((a) => a.path)).not.toContain('World/Pre-Elysium/Pipe.md');
  });
});

describe('a lone UTF-16 surrogate in a tool argument', () => {
  it('is refused (bad_request, invalid_string) and recorded as sent, so two different requests never leave one receipt', async () => {
    const t = tempDir('loretrace-surrogate-');
    try {
      const path = join(t.dir, 's.jsonl');
      const s = await fixtureSession({ ledgerPath: path });
      const lone = await s.call('lore_search', { query: 'brinefall \ud800 berths' });
      const replaced = await s.call('lore_search', { query: 'brinefall \ufffd berths' });
      const extra = await s.call('lore_search', { query: 'brinefall', extra: '\udfff\ud800' });
      await s.close();
      expect(lone).toMatchObject({ ok: false, refusal: { code: 'bad_request', message: 'lore_search: argument "query" holds an unpaired UTF-16 surrogate (\\ud800 at character 10), which is not Unicode text; expected well-formed Unicode text' } });
      expect(replaced.ok).toBe(true);
      expect(extra).toMatchObject({ ok: false, refusal: { code: 'bad_request' } });
      const records = readLedger(path);
      const calls = records.filter((r) => r.kind === 'TOOL_CALL').map((r) => r.arguments);
      // The exact code units: JSON string text (lone surrogates as \uXXXX escapes) and a sha256 over UTF-16LE.
      const utf16 = (x: string) => createHash('sha256').update(Buffer.from(x, 'utf16le')).digest('hex');
      expect(calls).toEqual([
        { query: { $ill_formed: 'string', chars: 18, json: '"brinefall \\ud800 berths"', utf16le_sha256: utf16('brinefall \ud800 berths') } },
        { query: 'brinefall \ufffd berths' },
        { query: 'brinefall', extra: { $ill_formed: 'string', chars: 2, json: '"\\udfff\\ud800"', utf16le_sha256: utf16('\udfff\ud800') } },
      ]);
      const refused = records.filter((r) => r.kind === 'TOOL_REFUSED').map((r) => (r.outcome as { reason: string }).reason);
      expect(refused).toEqual(['invalid_string', 'invalid_string']);
      expect((await verifyLedger(readFileSync(path, 'utf8'))).valid).toBe(true);
    } finally {
      t.cleanup();
    }
  });
});

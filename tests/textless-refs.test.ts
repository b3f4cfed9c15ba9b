/**
 * A note the notes stage keeps without text (a NUL byte: `binary_file`; a byte that is not UTF-8:
 * `not_utf8`) has no lines: `resolveRef` refuses every ref of it with the indexer's finding — the answer
 * `loretrace show` gives — never the range 1..0 an empty text note has; the proxy's `lore_read` refuses it
 * as a bad request naming that finding. And `lore_read` with line_start after line_end names both numbers
 * and what was expected.
 */
import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { main } from '../src/cli/main.js';
import { resolveRef } from '../src/refs/ref.js';
import type { ProxySession } from '../src/proxy/session.js';
import { makeVault } from './helpers/temp-vault.js';
import { FIXTURE_VAULT } from './helpers/shared.js';
import { fixtureSession, tempDir } from './helpers/proxy.js';

function refusal(f: () => unknown): { code: string; message: string; line?: number } {
  try {
    f();
  } catch (e) {
    const err = e as { code: string; message: string; details: { line?: number } };
    return { code: err.code, message: err.message, ...(err.details.line !== undefined ? { line: err.details.line } : {}) };
  }
  throw new Error('expected a refusal');
}

describe('resolveRef on a note kept without text', () => {
  const vault = makeVault('V', { 'Nul.md': '# Nul\n\nbefore\u0000after\n', 'Empty.md': '', 'Ok.md': '# Ok\n\nfine\n' });
  writeFileSync(join(vault, 'Lat.md'), Buffer.from('# Lat\n\ncaf\xe9\n', 'latin1'));

  it('refuses a binary note whole or by any fragment with binary_file, as show does', async () => {
    const index = await indexVault(vault, { persist: false });
    const nul = 'Nul.md contains a NUL byte at byte 13: expected a text file; it is listed with no chunks and no links; its lines cannot be served';
    expect(refusal(() => resolveRef(index, 'V:Nul.md'))).toEqual({ code: 'binary_file', message: `ref V:Nul.md: ${nul}` });
    expect(refusal(() => resolveRef(index, 'V:Nul.md#L1-L2'))).toEqual({ code: 'binary_file', message: `ref V:Nul.md#L1-L2: ${nul}` });
    expect(refusal(() => resolveRef(index, 'V:Nul.md#chunk0'))).toEqual({ code: 'binary_file', message: `ref V:Nul.md#chunk0: ${nul}` });
  });

  it('refuses a note that is not UTF-8 with not_utf8 and the line of the bad byte', async () => {
    const index = await indexVault(vault, { persist: false });
    expect(refusal(() => resolveRef(index, 'V:Lat.md'))).toEqual({
      code: 'not_utf8', line: 3,
      message: 'ref V:Lat.md: Lat.md:3: byte 10 is not valid UTF-8: expected UTF-8 text; the note is listed with no chunks and no links; its lines cannot be served',
    });
  });

  it('keeps 1..0 for an empty text note and the lines of a text note', async () => {
    const index = await indexVault(vault, { persist: false });
    expect(resolveRef(index, 'V:Empty.md')).toEqual({ path: 'Empty.md', chunk_index: null, line_start: 1, line_end: 0 });
    expect(resolveRef(index, 'V:Ok.md')).toEqual({ path: 'Ok.md', chunk_index: null, line_start: 1, line_end: 3 });
  });
});

describe('links on a note kept without text', () => {
  const vault = makeVault('W', { 'Nul.md': '# Nul\n\nbefore\u0000after\n', 'Linker.md': '# Linker\n\nSee [[Nul]].\n' });
  const links = async (ref: string) => {
    let stdout = '';
    let stderr = '';
    const code = await main(['links', '--lore', vault, '--index-dir', join(vault, '..', 'idx'), ref], { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, cwd: vault, isTTY: false });
    return { code, stdout, stderr };
  };

  it('lists its backlinks for the whole note and refuses a fragment with binary_file', async () => {
    const whole = await links('W:Nul.md');
    expect([whole.code, whole.stderr, whole.stdout.includes('Outgoing (0):'), whole.stdout.split('\n').filter((l) => l.startsWith('  Linker.md'))]).toEqual([
      0, '', true, ['  Linker.md L3:5  wikilink prose  [[Nul]]'],
    ]);
    expect(await links('W:Nul.md#L1-L2')).toEqual({
      code: 1, stdout: '', stderr: 'loretrace: ref W:Nul.md#L1-L2: Nul.md contains a NUL byte at byte 13: expected a text file; it is listed with no chunks and no links; its lines cannot be served [binary_file]\n',
    });
  });
});

describe('lore_read refusals that name what was received and what was expected', () => {
  let session: ProxySession | null = null;
  afterEach(async () => {
    await session?.close();
    session = null;
  });

  it('line_start after line_end: both numbers, and line_start ≤ line_end inside the ref', async () => {
    const tmp = tempDir('loretrace-textless-');
    session = await fixtureSession({ ledgerPath: join(tmp.dir, 'l.jsonl') });
    const r = await session.call('lore_read', { ref: 'FixtureLore:World/Pre-Elysium/Territories.md', line_start: 9, line_end: 6 });
    expect(r.ok ? null : r.refusal).toEqual({
      code: 'bad_request',
      message: 'lore_read: line_start 9 is after line_end 6; expected line_start ≤ line_end, both inside FixtureLore:World/Pre-Elysium/Territories.md (lines 1-14)',
    });
  });

  it('an admitted scope note kept without text: bad_request binary_file, never an empty read', async () => {
    const tmp = tempDir('loretrace-textless-');
    const lore = join(tmp.dir, 'FixtureLore');
    cpSync(FIXTURE_VAULT, lore, { recursive: true });
    writeFileSync(join(lore, 'World/Pre-Elysium/index.md'), '# Pre-Elysium\n\n\u0000\n');
    session = await fixtureSession({ ledgerPath: join(tmp.dir, 'l.jsonl'), lore });
    const r = await session.call('lore_read', { ref: 'FixtureLore:World/Pre-Elysium/index.md' });
    expect(r.ok ? null : r.refusal).toEqual({
      code: 'bad_request',
      message: 'lore_read: ref FixtureLore:World/Pre-Elysium/index.md: World/Pre-Elysium/index.md contains a NUL byte at byte 15: expected a text file; it is listed with no chunks and no links; its lines cannot be served',
    });
  });
});

/**
 * Bad input answered with a coded error naming the file, the line or JSON pointer and what was expected —
 * never an empty answer, a raw parser message or a stack trace. Exact codes, messages and exit codes.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { makeVault } from './helpers/temp-vault.js';
import { REPO } from './helpers/shared.js';

async function run(argv: string[], cwd = REPO) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, cwd, isTTY: false });
  return { code, stdout, stderr };
}

describe('show on a note the indexer listed without text', () => {
  const vault = makeVault('V', { 'Nul.md': '# Nul\n\nbefore\u0000after\n', 'Ok.md': '# Ok\n\nfine\n' });
  // A Latin-1 é (0xE9) on line 3: not UTF-8.
  writeFileSync(join(vault, 'Lat.md'), Buffer.from('# Lat\n\ncaf\xe9\n', 'latin1'));
  const show = (ref: string, ...more: string[]) => run(['show', '--lore', vault, '--index-dir', join(vault, '..', 'idx'), ref, ...more]);

  it('answers binary_file for a note with a NUL byte, whole or by line range, never an empty note', async () => {
    const nul = 'Nul.md contains a NUL byte at byte 13: expected a text file; it is listed with no chunks and no links; its lines cannot be served [binary_file]\n';
    expect(await show('V:Nul.md', '--json')).toEqual({ code: 1, stdout: '', stderr: `loretrace: ref V:Nul.md: ${nul}` });
    expect(await show('V:Nul.md#L1-L3')).toEqual({ code: 1, stdout: '', stderr: `loretrace: ref V:Nul.md#L1-L3: ${nul}` });
  });

  it('answers not_utf8 with the line of the bad byte, by ref or by name', async () => {
    const lat = 'Lat.md:3: byte 10 is not valid UTF-8: expected UTF-8 text; the note is listed with no chunks and no links; its lines cannot be served [not_utf8]\n';
    expect(await show('V:Lat.md#L1-L3')).toEqual({ code: 1, stdout: '', stderr: `loretrace: ref V:Lat.md#L1-L3: ${lat}` });
    expect(await show('Lat')).toEqual({ code: 1, stdout: '', stderr: `loretrace: ref Lat: ${lat}` });
  });

  it('still shows a text note of the same vault', async () => {
    expect(await show('V:Ok.md')).toEqual({ code: 0, stdout: 'V:Ok.md  (lines 1-3)\n1 │ # Ok\n2 │\n3 │ fine\n', stderr: '' });
  });
});

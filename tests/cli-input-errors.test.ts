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

describe('--config read by the one strict JSON reader', () => {
  const vault = makeVault('C', { 'Ok.md': '# Ok\n\nfine\n' });
  const config = (name: string, bytes: Buffer | string) => {
    const file = join(vault, '..', name);
    writeFileSync(file, bytes);
    return file;
  };
  const index = (file: string) => run(['index', '--lore', vault, '--index-dir', join(vault, '..', 'idx'), '--config', file]);

  it('refuses a byte that is not UTF-8 with not_utf8 and its offset', async () => {
    const f = config('latin1.json', Buffer.from('{"namespace": "caf\xe9"}', 'latin1'));
    expect(await index(f)).toEqual({ code: 2, stdout: '', stderr: `loretrace: config file ${f} is not UTF-8: invalid byte 0xe9 at byte offset 18 [not_utf8]\n` });
  });

  it('refuses a NUL in a string with bad_json at its line and column', async () => {
    const f = config('nul.json', '{"namespace": "a\u0000b"}');
    expect(await index(f)).toEqual({ code: 2, stdout: '', stderr: `loretrace: config file ${f} is not JSON: control character in string, found "\\u0000" at line 1, column 17 [bad_json]\n` });
  });

  it('refuses a key given twice with duplicate_key', async () => {
    const f = config('dup.json', '{\n"namespace": "A",\n"namespace": "B"\n}');
    expect(await index(f)).toEqual({ code: 2, stdout: '', stderr: `loretrace: config file ${f} has the key /namespace twice (line 2 and line 3); JSON readers keep only the last value, so the document would not be applied as a reviewer reads it; expected each key once per object [duplicate_key]\n` });
  });

  it('names the pointer and the expected shape of a wrong type, and lists every schema problem', async () => {
    const arr = config('array.json', '[1]');
    expect(await index(arr)).toEqual({ code: 2, stdout: '', stderr: `loretrace: config file ${arr} is invalid at /: expected an object [bad_config]\n` });
    const many = config('many.json', '{"max_file_bytes": 0, "include": "x", "namespace": "a b"}');
    expect(await index(many)).toEqual({ code: 2, stdout: '', stderr: `loretrace: config file ${many} is invalid (3 problems) at /include: expected an array; /max_file_bytes: expected a number >= 1; /namespace: expected a string matching ^[A-Za-z0-9][A-Za-z0-9._-]*$ [bad_config]\n` });
  });

  it('ignores a leading byte-order mark, as every JSON input does (Ghostlight reads utf-8-sig)', async () => {
    const f = config('bom.json', '\ufeff{"namespace": "Bom"}');
    const r = await index(f);
    expect([r.code, r.stderr, r.stdout.split('\n')[0]]).toEqual([0, '', `Indexed Bom (${vault})`]);
  });
});

describe('verify-trace on a JSON file holding null', () => {
  it('says what the file is and what was expected, not a ledger schema failure', async () => {
    const dir = makeVault('T', { 'null.json': 'null\n' });
    const file = join(dir, 'null.json');
    expect(await run(['verify-trace', '--lore', 'lore-fixtures/FixtureLore', '--index-dir', join(dir, '..', 'idx'), file])).toEqual({
      code: 1, stdout: '', stderr: `loretrace: ${file}: expected a JSON object (a responder output capture, a capture fragment, a traverse result or a ledger export), got null [bad_trace_input]\n`,
    });
  });
});

describe('traverse --policy with several shape problems', () => {
  it('names every problem of the policy in one error, each pointer with what was expected', async () => {
    const dir = makeVault('P', { 'p.json': '{"max_link_depth": -1, "allowed_prefixes": [], "follow_link_classes": "x", "stop_conditions": []}' });
    const file = join(dir, 'p.json');
    expect(await run(['traverse', '--lore', 'lore-fixtures/FixtureLore', '--index-dir', join(dir, '..', 'idx'), '--policy', file, '--query', 'x'])).toEqual({
      code: 1, stdout: '',
      stderr: 'loretrace: traversal_policy has 4 problems: traversal_policy is missing /required_seed_refs (expected a list of strings); ' +
        'traversal_policy /max_link_depth must be an integer ≥ 0 (got -1) (expected an integer from 0 to 9007199254740991); ' +
        'traversal_policy /follow_link_classes must be a list of strings (got "x") (expected a list of strings); ' +
        `traversal_policy /allowed_prefixes is empty, so it admits no lore at all (expected at least one prefix such as Namespace:folder/) (${file}, pointer /required_seed_refs) [bad_policy]\n`,
    });
  });
});

// Hostile vaults (BREAKER → B2, NOTES.md items 2–4): names no ref can carry, symlink loops, bad --prefix.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { indexVault, vaultAssets } from '../src/indexer/build.js';
import { getNote } from '../src/indexer/lookup.js';
import { search } from '../src/search/search.js';
import { refNameProblem } from '../src/vault/ref-name.js';
import { scanVault } from '../src/vault/scan.js';
import { REPO } from './helpers/shared.js';
import { makeVault } from './helpers/temp-vault.js';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});
const tail = 'not indexed as a note (listed as an other file, so links to it are unresolved)';
const HOSTILE = {
  'x#y.md': '# hash\n',
  'a:b.md': '# colon\n',
  'new\nline.md': '# newline\n',
  'back\\slash.md': '# backslash\n',
  'p%45.md': '# percent\n',
  ' lead.md': '# lead\n',
  'bi\u202Edi.md': '# bidi\n',
  'F#1/in.md': '# folder\n',
  'ok.md': '# ok\n\n[[a:b]] [[x#y]] [z](a%3Ab.md) [[in]] [[p%45]]\n',
};

describe('scanVault', () => {
  it('reports every note whose path cannot be written as a ref as unreferenceable_name and lists it as an asset', async () => {
    const v = makeVault('v2', HOSTILE);
    const r = await scanVault(v);
    expect(r.files.map((f) => f.path)).toEqual(['ok.md']);
    expect(r.assets).toEqual([' lead.md', 'F#1/in.md', 'a:b.md', 'back\\slash.md', 'bi\u202Edi.md', 'new\nline.md', 'p%45.md', 'x#y.md']);
    expect(r.findings).toEqual([
      { code: 'unreferenceable_name', severity: 'warning', path: ' lead.md', message: `" lead.md" cannot be written as a lore ref: it contains leading whitespace, which a ref refuses; rename the file " lead.md" without it; ${tail}` },
      { code: 'unreferenceable_name', severity: 'warning', path: 'F#1/in.md', message: `"F#1/in.md" cannot be written as a lore ref: it contains "#", which a ref reads as the start of a fragment; rename the folder "F#1" without it; ${tail}` },
      { code: 'unreferenceable_name', severity: 'warning', path: 'a:b.md', message: `"a:b.md" cannot be written as a lore ref: it contains ":", which a ref reads as a namespace or drive-letter separator; rename the file "a:b.md" without it; ${tail}` },
      { code: 'unreferenceable_name', severity: 'warning', path: 'back\\slash.md', message: `"back\\\\slash.md" cannot be written as a lore ref: it contains a backslash, which a ref refuses (only "/" separates folders); rename the file "back\\\\slash.md" without it; ${tail}` },
      { code: 'unreferenceable_name', severity: 'warning', path: 'bi\u202Edi.md', message: `"bi\\u202edi.md" cannot be written as a lore ref: it contains a bidirectional control character U+202E, which no ref may contain; rename the file "bi\\u202edi.md" without it; ${tail}` },
      { code: 'unreferenceable_name', severity: 'warning', path: 'new\nline.md', message: `"new\\nline.md" cannot be written as a lore ref: it contains a control character U+000A, which no ref may contain; rename the file "new\\nline.md" without it; ${tail}` },
      { code: 'unreferenceable_name', severity: 'warning', path: 'p%45.md', message: `"p%45.md" cannot be written as a lore ref: it contains "%45", which a ref refuses as percent-encoding; rename the file "p%45.md" without it; ${tail}` },
      { code: 'unreferenceable_name', severity: 'warning', path: 'x#y.md', message: `"x#y.md" cannot be written as a lore ref: it contains "#", which a ref reads as the start of a fragment; rename the file "x#y.md" without it; ${tail}` },
    ]);
  });

  it('reports a symlink to the vault root or to a folder containing it as symlink_loop, never followed', async () => {
    const v = makeVault('v3', { 'World/Sub/Note.md': '# Note\n', 'Other/Page.md': '# Page\n' });
    symlinkSync('../v3', join(v, 'loop'));
    symlinkSync('..', join(v, 'World/Sub/up'));
    symlinkSync('../..', join(v, 'World/Sub/root'));
    symlinkSync('../../Other', join(v, 'World/Sub/side'));
    symlinkSync('..', join(v, 'parent'));
    const r = await scanVault(v);
    expect(r.files.map((f) => f.path)).toEqual(['Other/Page.md', 'World/Sub/Note.md']);
    expect(r.findings).toEqual([
      { code: 'symlink_loop', severity: 'info', path: 'World/Sub/root', message: 'symbolic link World/Sub/root points to the vault root, which contains the link (a loop); not followed' },
      { code: 'symlink_inside_vault', severity: 'info', path: 'World/Sub/side', message: 'symbolic link World/Sub/side points to Other inside the vault; indexed once under the target\'s own path' },
      { code: 'symlink_loop', severity: 'info', path: 'World/Sub/up', message: 'symbolic link World/Sub/up points to folder World, which contains the link (a loop); not followed' },
      { code: 'symlink_loop', severity: 'info', path: 'loop', message: 'symbolic link loop points to the vault root, which contains the link (a loop); not followed' },
      { code: 'symlink_outside_vault', severity: 'warning', path: 'parent', message: 'symbolic link parent points outside the vault; not followed' },
    ]);
  });
});

describe('refNameProblem', () => {
  it('accepts every path parseRef reads back unchanged, including inner spaces and Unicode', () => {
    expect(refNameProblem('World/Pre-Elysium/Cold Wake Panic.md')).toBeNull();
    expect(refNameProblem('Edge/Café Noir.md')).toBeNull();
    expect(refNameProblem('Folder /Note .md')).toBeNull();
  });

  it('names trailing whitespace in the last segment (a note under a custom include)', () => {
    expect(refNameProblem('Drafts/note.md ')).toEqual({ what: 'trailing whitespace', why: 'which a ref refuses', segment: 'Drafts/note.md ', is_file: true });
  });
});

describe('indexVault', () => {
  it('keeps unreferenceable notes out of notes, search and link targets; links to them are unresolved', async () => {
    const v = makeVault('v2', HOSTILE);
    const index = await indexVault(v, { indexDir: join(v, '..', 'idx') });
    expect(index.notes.map((n) => n.path)).toEqual(['ok.md']);
    expect(vaultAssets(index)).toEqual([' lead.md', 'F#1/in.md', 'a:b.md', 'back\\slash.md', 'bi\u202Edi.md', 'new\nline.md', 'p%45.md', 'x#y.md']);
    expect(getNote(index, 'x#y.md')).toBeUndefined();
    expect(search(index, 'hash colon newline backslash percent lead bidi folder ok', { k: 20 }).map((h) => h.ref)).toEqual(['v2:ok.md#chunk0']);
    expect(index.links.map((l) => [l.raw, l.resolution.status])).toEqual([
      ['[[a:b]]', 'unresolved'], ['[[x#y]]', 'unresolved'], ['[z](a%3Ab.md)', 'unresolved'], ['[[in]]', 'unresolved'], ['[[p%45]]', 'unresolved'],
    ]);
    expect(index.findings.filter((f) => f.code === 'unreferenceable_name').length).toBe(8);
  });
});

async function run(argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, cwd: REPO, isTTY: false });
  return { code, stdout, stderr };
}

describe('loretrace search', () => {
  const lore = join(REPO, 'lore-fixtures/FixtureLore');
  const idx = mkdtempSync(join(tmpdir(), 'lt-hostile-idx-cli-'));
  temps.push(idx);
  const S = ['search', 'Fences', '--lore', lore, '--index-dir', idx, '--json'];

  it.each([
    ['../', 'it contains a ".." segment'],
    ['/Edge', 'it starts with "/"'],
    ['Other:Edge/', 'its namespace Other is not this vault\'s (FixtureLore)'],
    ['%45dge/', 'it contains percent-encoding'],
    ['Edge/../World/', 'it contains a ".." segment'],
    ['', 'it is empty'],
  ])('refuses --prefix %j with exit 2 bad_option naming it', async (prefix, why) => {
    expect(await run([...S, '--prefix', prefix])).toEqual({
      code: 2, stdout: '', stderr: `loretrace: --prefix ${JSON.stringify(prefix)} is not a valid lore ref: ${why} [bad_option]\n`,
    });
  });

  it('refuses a --prefix with a fragment', async () => {
    expect(await run([...S, '--prefix', 'Edge/Fences.md#chunk1'])).toEqual({
      code: 2, stdout: '', stderr: 'loretrace: --prefix "Edge/Fences.md#chunk1" is not a vault path prefix: it has a fragment after "#" [bad_option]\n',
    });
  });

  it('refuses an empty --class with exit 2', async () => {
    expect(await run([...S, '--class', ''])).toEqual({
      code: 2, stdout: '', stderr: 'loretrace: option --class must be a class name, not an empty value (got ""); see \'loretrace search --help\' [usage]\n',
    });
  });

  it('accepts this vault\'s namespace, a folder with or without "/", and an NFD prefix (read as NFC)', async () => {
    const refs = async (prefix: string) => JSON.parse((await run([...S, '--prefix', prefix, '--k', '2'])).stdout).results.map((h: { ref: string }) => h.ref);
    // "Fences" is the note's title: its first chunk first (name match).
    expect(await refs('FixtureLore:Edge/')).toEqual(['FixtureLore:Edge/Fences.md#chunk0', 'FixtureLore:Edge/Fences.md#chunk1']);
    expect(await refs('Edge')).toEqual(['FixtureLore:Edge/Fences.md#chunk0', 'FixtureLore:Edge/Fences.md#chunk1']);
    const nfd = await run(['search', 'stored', '--lore', lore, '--index-dir', idx, '--json', '--k', '1', '--prefix', 'Edge/Cafe\u0301 Noir.md']);
    expect([nfd.code, nfd.stderr, JSON.parse(nfd.stdout).results.map((h: { ref: string }) => h.ref)]).toEqual([0, '', ['FixtureLore:Edge/Café Noir.md#chunk0']]);
  });
});

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadVaultConfig } from '../src/vault/config.js';
import { scanVault } from '../src/vault/scan.js';

const temps: string[] = [];
function tempVault(files: Record<string, string | Buffer> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'lt-vault-'));
  temps.push(dir);
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), body);
  }
  return dir;
}
afterEach(() => {
  while (temps.length) rmSync(temps.pop()!, { recursive: true, force: true });
});

describe('scanVault', () => {
  it('lists notes and assets in code-unit order, skipping dot-folders, dot-files and node_modules', async () => {
    const v = tempVault({
      'b.md': '# b\n', 'B.md': '# B\n', 'a/z.md': 'z\n', 'a/Map.png': 'png', '.obsidian/app.md': 'x',
      '.hidden.md': 'x', 'node_modules/pkg/readme.md': 'x', 'a/.trash/old.md': 'x',
    });
    const r = await scanVault(v);
    expect(r.files.map((f) => f.path)).toEqual(['B.md', 'a/z.md', 'b.md']);
    expect(r.assets).toEqual(['a/Map.png']);
    expect(r.findings).toEqual([]);
    expect(r.files[0]).toMatchObject({ size: 4, sha256: createHash('sha256').update('# B\n').digest('hex'), abs_path: join(r.root, 'B.md') });
    expect(Buffer.from(r.files[0]!.bytes!).toString('utf8')).toBe('# B\n');
  });

  it('normalises file names to NFC', async () => {
    const v = tempVault({ ['Cafe\u0301.md']: 'x\n' });
    const r = await scanVault(v);
    expect(r.files.map((f) => f.path)).toEqual(['Caf\u00e9.md']);
  });

  it('applies include and exclude globs', async () => {
    const v = tempVault({ 'World/a.md': 'a', 'World/Drafts/b.md': 'b', 'Other/c.md': 'c' });
    const r = await scanVault(v, { include: ['World/**/*.md'], exclude: ['**/Drafts/**'] });
    expect(r.files.map((f) => f.path)).toEqual(['World/a.md']);
    expect(r.assets).toEqual(['Other/c.md']);
  });

  it('never follows symlinks: outside the vault, inside the vault, and dangling each get a finding', async () => {
    const outside = tempVault({ 'secret.md': 'secret\n' });
    const v = tempVault({ 'Real.md': '# Real\n' });
    symlinkSync(join(outside, 'secret.md'), join(v, 'Outside.md'));
    symlinkSync(join(v, 'Real.md'), join(v, 'Alias.md'));
    symlinkSync(join(v, 'missing.md'), join(v, 'Dangling.md'));
    symlinkSync(outside, join(v, 'OutDir'));
    const r = await scanVault(v);
    expect(r.files.map((f) => f.path)).toEqual(['Real.md']);
    expect(r.findings).toEqual([
      { code: 'symlink_inside_vault', severity: 'info', path: 'Alias.md', message: 'symbolic link Alias.md points to Real.md inside the vault; indexed once under the target\'s own path' },
      { code: 'unreadable_file', severity: 'warning', path: 'Dangling.md', message: 'cannot read Dangling.md: dangling symbolic link; skipped' },
      { code: 'symlink_outside_vault', severity: 'warning', path: 'OutDir', message: 'symbolic link OutDir points outside the vault; not followed' },
      { code: 'symlink_outside_vault', severity: 'warning', path: 'Outside.md', message: 'symbolic link Outside.md points outside the vault; not followed' },
    ]);
  });

  it('walks real folders by their readdir type, and never a symlink to a folder inside the vault', async () => {
    const v = tempVault({ 'Lore/Deep/Kel.md': '# Kel\n', 'Lore/Top.md': '# Top\n' });
    symlinkSync(join(v, 'Lore', 'Deep'), join(v, 'Shortcut'));
    const r = await scanVault(v);
    expect(r.files.map((f) => f.path)).toEqual(['Lore/Deep/Kel.md', 'Lore/Top.md']);
    expect(r.findings).toEqual([
      { code: 'symlink_inside_vault', severity: 'info', path: 'Shortcut', message: 'symbolic link Shortcut points to Lore/Deep inside the vault; indexed once under the target\'s own path' },
    ]);
  });

  it('never opens a FIFO, and reports one whatever its name (a note\'s: warning; another file\'s: info)', async () => {
    const v = tempVault({ 'ok.md': 'ok\n', 'World/x.md': 'x\n' });
    execFileSync('mkfifo', [join(v, 'Pipe.md')]);
    execFileSync('mkfifo', [join(v, 'World', 'pipe')]);
    const r = await scanVault(v);
    expect(r.files.map((f) => f.path)).toEqual(['World/x.md', 'ok.md']);
    expect(r.findings).toEqual([
      { code: 'not_a_regular_file', severity: 'warning', path: 'Pipe.md', message: 'Pipe.md is not a regular file (FIFO); never opened, skipped' },
      { code: 'not_a_regular_file', severity: 'info', path: 'World/pipe', message: 'World/pipe is not a regular file (FIFO); never opened, skipped' },
    ]);
  });

  it('does not read a note over max_file_bytes and says so', async () => {
    const v = tempVault({ 'big.md': 'x'.repeat(101), 'small.md': 'x'.repeat(100) });
    const r = await scanVault(v, { maxFileBytes: 100 });
    expect(r.files.map((f) => f.path)).toEqual(['small.md']);
    expect(r.too_large).toEqual([{ path: 'big.md', size: 101 }]);
    expect(r.findings).toEqual([
      { code: 'file_too_large', severity: 'warning', path: 'big.md', message: 'big.md is 101 bytes, over max_file_bytes 100; not parsed, chunked or searched (links to it resolve as too_large)' },
    ]);
  });

  it('reports an empty vault with a finding', async () => {
    const v = tempVault({ 'image.png': 'png' });
    const r = await scanVault(v);
    expect(r.files).toEqual([]);
    expect(r.findings).toEqual([{ code: 'empty_vault', severity: 'warning', message: `vault ${v} contains no markdown notes; the index is empty` }]);
  });

  it('throws vault_not_found (exit 2) for a missing directory, naming it', async () => {
    await expect(scanVault('/nonexistent/lore')).rejects.toMatchObject({
      code: 'vault_not_found', exitCode: 2, message: 'vault directory not found: /nonexistent/lore',
    });
  });

  it('throws vault_not_a_directory for a file', async () => {
    const v = tempVault({ 'a.md': 'a' });
    await expect(scanVault(join(v, 'a.md'))).rejects.toMatchObject({ code: 'vault_not_a_directory', exitCode: 2 });
  });

  it('skips reading a file the reuse hook vouches for', async () => {
    const v = tempVault({ 'a.md': 'a', 'b.md': 'b' });
    const r = await scanVault(v, { reuse: (path) => (path === 'a.md' ? 'f'.repeat(64) : undefined) });
    expect(r.files.map((f) => [f.path, f.bytes === undefined, f.sha256.slice(0, 4)])).toEqual([['a.md', true, 'ffff'], ['b.md', false, '3e23']]);
  });
});

describe('loadVaultConfig', () => {
  it('returns an empty config when the vault has no loretrace.config.json', async () => {
    const v = tempVault({ 'a.md': 'a' });
    expect(await loadVaultConfig(v)).toEqual({ config: {}, file: null });
  });

  it('reads and validates the vault config', async () => {
    const v = tempVault({ 'loretrace.config.json': JSON.stringify({ namespace: 'Lore', exclude: ['Drafts/**'], max_file_bytes: 1000 }) });
    expect(await loadVaultConfig(v)).toEqual({ config: { namespace: 'Lore', exclude: ['Drafts/**'], max_file_bytes: 1000 }, file: join(v, 'loretrace.config.json') });
  });

  it('names the file and JSON pointer of a schema violation', async () => {
    const v = tempVault({ 'loretrace.config.json': JSON.stringify({ class_rules: [{ glob: 'a/**', classes: 'x' }] }) });
    const file = join(v, 'loretrace.config.json');
    await expect(loadVaultConfig(v)).rejects.toMatchObject({
      code: 'bad_config', exitCode: 2, message: `config file ${file} is invalid at /class_rules/0/classes: expected an array`,
      details: { file, pointer: '/class_rules/0/classes' },
    });
  });

  it('rejects unknown keys, naming them', async () => {
    const v = tempVault({ 'loretrace.config.json': '{"max_file_byte": 5}' });
    await expect(loadVaultConfig(v)).rejects.toMatchObject({ code: 'bad_config', details: { pointer: '/max_file_byte' } });
  });

  it('rejects invalid JSON', async () => {
    const v = tempVault({ 'loretrace.config.json': '{ nope' });
    await expect(loadVaultConfig(v)).rejects.toMatchObject({
      code: 'bad_json', exitCode: 2, message: `config file ${join(v, 'loretrace.config.json')} is not JSON: expected a property name in double quotes, found "n" at line 1, column 3`,
    });
  });

  it('throws config_not_found for a missing --config file', async () => {
    await expect(loadVaultConfig('/tmp', { configPath: 'missing.json', cwd: '/nowhere' })).rejects.toMatchObject({
      code: 'config_not_found', exitCode: 2, message: 'config file not found: /nowhere/missing.json',
    });
  });
});

/**
 * Throw-away vaults for tests: `makeVault(name, files)` writes `<tmp>/<random>/<name>/…` (the folder name is
 * the vault's default namespace) and returns its path; every vault made is removed after the test file.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});

/** A fresh vault `<tmp>/<name>` holding the given files (vault-relative path → UTF-8 text; folders created). */
export function makeVault(name: string, files: Record<string, string>): string {
  const base = mkdtempSync(join(tmpdir(), 'lt-vault-'));
  temps.push(base);
  const dir = join(base, name);
  mkdirSync(dir, { recursive: true });
  for (const [p, body] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), body);
  }
  return dir;
}

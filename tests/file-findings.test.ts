import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { fileFindings } from '../src/indexer/lookup.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const indexDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'lt-file-findings-'));
  dirs.push(d);
  return d;
};
const LINK_CODES = ['unresolved_link', 'broken_fragment', 'ambiguous_link'];
/** True while `index.links` is still the lazy getter (the vault's links not resolved yet). */
const linksPending = (index: VaultIndex) => typeof Object.getOwnPropertyDescriptor(index, 'links')?.get === 'function';

describe('fileFindings', () => {
  it("gives a loaded index's findings less link resolution's, in the same order, without resolving its links", async () => {
    const dir = indexDir();
    await indexVault(FIXTURE_VAULT, { indexDir: dir });
    const warm = await indexVault(FIXTURE_VAULT, { indexDir: dir });
    const files = fileFindings(warm);
    expect(linksPending(warm)).toBe(true);
    const all = warm.findings;
    expect(all.filter((f) => LINK_CODES.includes(f.code)).length).toBeGreaterThan(0);
    expect(files).toEqual(all.filter((f) => !LINK_CODES.includes(f.code)));
    expect(files.map((f) => f.code)).toContain('bad_frontmatter');
  });

  it('filters the findings of an index it did not see loaded', async () => {
    const cold = await indexVault(FIXTURE_VAULT, { persist: false });
    const plain = { ...cold } as VaultIndex;
    expect(fileFindings(plain)).toEqual(cold.findings.filter((f) => !LINK_CODES.includes(f.code)));
  });
});

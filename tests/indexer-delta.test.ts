// Incremental search updates through delta shards and tombstones (docs/INDEX.md "Incremental indexing").
import { appendFileSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { indexVault } from '../src/indexer/build.js';
import { search } from '../src/search/search.js';
import type { VaultIndex } from '../src/types.js';
import { FIXTURE_VAULT } from './helpers/shared.js';

const QUERIES = ['harbor charter', 'Brinefall Blackout', 'salvage wreck claim', 'the', 'Quiet Hands care in beds', 'tidewright', 'delta marker zebra'];
const manifest = (dir: string) => JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { store: { search: Record<string, string>; search_delta?: Record<string, string> } };
/** Every query's top 20 as JSON: what must not depend on how the index got its current state. */
const answers = (index: VaultIndex) => JSON.stringify(QUERIES.map((q) => search(index, q, { k: 20 })));

let base: string;
let vault: string;
let dir: string;
beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'lt-delta-'));
  vault = join(base, 'FixtureLore');
  cpSync(FIXTURE_VAULT, vault, { recursive: true });
  dir = join(base, 'index');
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('indexVault: incremental search updates', () => {
  it('writes a small change to delta shards, keeps the base term shards, and answers as a fresh build', async () => {
    await indexVault(vault, { indexDir: dir });
    const before = manifest(dir);
    expect(before.store.search_delta).toBeUndefined();
    appendFileSync(join(vault, 'World/Politics/Salvage Law.md'), '\nA delta marker zebra line about salvage.\n');
    const updated = await indexVault(vault, { indexDir: dir });
    const after = manifest(dir);
    expect(after.store.search).toEqual(before.store.search);
    expect(Object.keys(after.store.search_delta ?? {}).sort()).toEqual(['a', 'c', 'd', 'f', 'h', 'i', 'l', 'm', 'n', 'o', 'p', 'r', 's', 't', 'u', 'w', 'z']); // first letters of the note's terms
    const fresh = await indexVault(vault, { persist: false });
    expect(answers(updated)).toBe(answers(fresh));
    expect(search(updated, 'delta marker zebra', { k: 1 })[0]!.ref).toBe('FixtureLore:World/Politics/Salvage Law.md#chunk1');
    // Warm: the persisted base + delta + tombstones give the same answers.
    expect(answers(await indexVault(vault, { indexDir: dir }))).toBe(answers(fresh));
  });

  it('applies tombstones: a removed note is gone from the answers while its postings still sit in the base shards', async () => {
    unlinkSync(join(vault, 'Search/Tidewright Almanac.md'));
    const updated = await indexVault(vault, { indexDir: dir });
    expect(manifest(dir).store.search_delta).toBeDefined();
    expect(search(updated, 'tidewright', { k: 20 }).map((h) => h.path)).not.toContain('Search/Tidewright Almanac.md');
    expect(answers(updated)).toBe(answers(await indexVault(vault, { persist: false })));
    expect(answers(await indexVault(vault, { indexDir: dir }))).toBe(answers(await indexVault(vault, { persist: false })));
  });

  it('merges everything back into the base shards past 5 % of the docs (at least 64 pending), with the same answers', async () => {
    const notes = (readdirSync(vault, { recursive: true }) as string[]).filter((p) => p.endsWith('.md')).sort();
    expect(notes.length).toBeGreaterThan(40);
    for (const p of notes) appendFileSync(join(vault, p), '\n## Added\n\nMore harbor charter text for the compaction test.\n');
    const updated = await indexVault(vault, { indexDir: dir });
    expect(manifest(dir).store.search_delta).toBeUndefined();
    const fresh = await indexVault(vault, { persist: false });
    expect(answers(updated)).toBe(answers(fresh));
    expect(answers(await indexVault(vault, { indexDir: dir }))).toBe(answers(fresh));
  });
});

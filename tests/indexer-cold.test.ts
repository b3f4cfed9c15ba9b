import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { indexStats, indexVault } from '../src/indexer/build.js';
import { FLUSH_BYTES } from '../src/indexer/cold.js';
import { search } from '../src/search/search.js';
import { pathToFileURL } from 'node:url';
import { AETHERIA, FIXTURE_VAULT, REPO, hasShared } from './helpers/shared.js';

const temps: string[] = [];
function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
afterEach(() => {
  while (temps.length) rmSync(temps.pop()!, { recursive: true, force: true });
});

/** 300 notes of about 2.4 KB each (Lore/Region-NNN.md), linked in a ring. */
function bigVault(): string {
  const v = join(temp('lt-cold-vault-'), 'Lore');
  mkdirSync(v);
  for (let i = 0; i < 300; i++) {
    const n = String(i).padStart(3, '0');
    const next = String((i + 1) % 300).padStart(3, '0');
    const body = Array.from({ length: 30 }, (_, j) => `Line ${j} of region ${n}: the tidewright mends the sea wall ${i * 30 + j} times.`).join('\n');
    writeFileSync(join(v, `Region-${n}.md`), `# Region ${n}\n\nSee [[Region-${next}]].\n\n## Notes\n\n${body}\n`);
  }
  return v;
}

describe('indexVault (cold build, streamed)', () => {
  it('leaves no temp files behind: the data folder holds exactly the manifest\'s files', async () => {
    const v = bigVault();
    const dir = temp('lt-cold-idx-');
    const index = await indexVault(v, { indexDir: dir });
    expect(indexStats(index)).toMatchObject({ notes: 300, chunks: 600, parsed: 300 });
    const manifest = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'));
    const listed = [
      ...[manifest.store.notes, manifest.store.chunks, manifest.store.parse_links].flat().map((s: { file: string }) => s.file),
      manifest.store.search_meta,
      ...Object.values(manifest.store.search),
    ].sort();
    expect(manifest.shard_count).toBe(2);
    expect(readdirSync(join(dir, 'data')).sort()).toEqual(listed);
    expect(readdirSync(join(dir, 'data')).filter((n) => n.includes('.tmp-'))).toEqual([]);
  });

  it('a write failure in the middle: index_not_saved, no manifest, and records, links and search equal to an in-memory build', async () => {
    const v = bigVault();
    const dir = temp('lt-cold-idx-');
    const memory = await indexVault(v, { persist: false });
    let sabotaged = false;
    // After the first batch (64 notes, more than FLUSH_BYTES of chunk lines per record shard, so temp files
    // exist), the data folder is replaced by a file: every later write fails with ENOTDIR.
    expect(64 * 2400 / 2).toBeGreaterThan(FLUSH_BYTES);
    const index = await indexVault(v, {
      indexDir: dir,
      onProgress: () => {
        if (sabotaged) return;
        sabotaged = true;
        rmSync(join(dir, 'data'), { recursive: true, force: true });
        writeFileSync(join(dir, 'data'), 'not a folder');
      },
    });
    expect(sabotaged).toBe(true);
    expect(existsSync(join(dir, 'index.json'))).toBe(false);
    const saved = index.findings.filter((f) => f.code === 'index_not_saved');
    expect(saved).toHaveLength(1);
    expect(saved[0]!.severity).toBe('warning');
    expect(saved[0]!.message).toMatch(new RegExp(`^cannot save the index to ${dir}: ENOTDIR: not a directory, open '${dir}/data/[a-z_]+-00[01]\\.tmp-\\d+-[a-z0-9]+'; results are correct but the next run starts cold$`));
    expect(JSON.stringify([index.notes, index.chunks, index.links])).toBe(JSON.stringify([memory.notes, memory.chunks, memory.links]));
    expect(index.findings.filter((f) => f.code !== 'index_not_saved')).toEqual(memory.findings);
    for (const q of ['tidewright sea wall 4470', 'Region 123', 'mends']) {
      expect(JSON.stringify(search(index, q, { k: 7 }))).toBe(JSON.stringify(search(memory, q, { k: 7 })));
    }
    // The next run is a cold build again (and succeeds once the folder is usable).
    rmSync(join(dir, 'data'), { force: true });
    const next = await indexVault(v, { indexDir: dir });
    expect(indexStats(next)).toMatchObject({ parsed: 300, reused: 0, rebuilt: false });
    expect(next.findings.map((f) => f.code)).toEqual([]);
  });

  it('a data folder that cannot be created: index_not_saved, everything kept in memory', async () => {
    const v = bigVault();
    const dir = temp('lt-cold-idx-');
    writeFileSync(join(dir, 'data'), 'a file where the data folder belongs');
    const index = await indexVault(v, { indexDir: dir });
    expect(index.findings.map((f) => f.code)).toEqual(['index_not_saved']);
    expect(index.findings[0]!.message).toBe(`cannot save the index to ${dir}: index directory ${dir}: cannot create ${dir}/data: ${dir}/data is not a folder; expected an output path whose folder exists or can be created (nothing written); results are correct but the next run starts cold`);
    expect(readdirSync(dir)).toEqual(['data']);
    expect(index.chunks).toHaveLength(600);
    expect(search(index, 'Region 042', { k: 1 })[0]!.ref).toBe('Lore:Region-042.md#chunk0');
  });
});

describe('commitManifest (temp files)', () => {
  it('removes an unreferenced temp file only when it is older than an hour (a cold build may still stream into it)', async () => {
    const v = bigVault();
    const dir = temp('lt-cold-idx-');
    await indexVault(v, { indexDir: dir });
    const young = join(dir, 'data', 'chunks-000.tmp-1-young');
    const old = join(dir, 'data', 'chunks-001.tmp-1-old');
    const stale = join(dir, 'data', 'chunks-001-0000000000000000.jsonl');
    for (const f of [young, old, stale]) writeFileSync(f, 'x\n');
    const now = Date.now() / 1000;
    utimesSync(young, now - 120, now - 120); // 2 minutes
    utimesSync(old, now - 7200, now - 7200); // 2 hours
    utimesSync(stale, now - 120, now - 120);
    writeFileSync(join(v, 'Region-000.md'), '# Region 000\n\nChanged.\n');
    const next = await indexVault(v, { indexDir: dir });
    expect(indexStats(next)).toMatchObject({ parsed: 1, reused: 299 });
    expect(existsSync(young)).toBe(true);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(stale)).toBe(false);
  });
});

const DIST_BUILD = join(REPO, 'dist', 'indexer', 'build.js');
describe.skipIf(!existsSync(DIST_BUILD))(`indexVault with pooled worker threads (needs the dist build: ${existsSync(DIST_BUILD) ? 'present' : 'run npm run build'})`, () => {
  it('reuses the workers across runs with each run\'s own config, also for two runs at once', async () => {
    type Api = { indexVault: typeof indexVault; indexStats: typeof indexStats };
    const dist = (await import(pathToFileURL(DIST_BUILD).href)) as Api;
    const vault = hasShared ? AETHERIA : FIXTURE_VAULT;
    const run = (budget: number, workers: boolean) => dist.indexVault(vault, { persist: false, workers, config: { chunk_word_budget: budget } });
    const inline = { 40: await run(40, false), 350: await run(350, false) };
    expect(inline[40].chunks.length).toBeGreaterThan(inline[350].chunks.length);
    // One after the other (the second run gets the pooled workers of the first), then two at once.
    const sequential = [await run(40, true), await run(350, true)];
    const concurrent = await Promise.all([run(350, true), run(40, true)]);
    for (const [index, budget] of [[sequential[0]!, 40], [sequential[1]!, 350], [concurrent[0]!, 350], [concurrent[1]!, 40]] as const) {
      expect(dist.indexStats(index)!.threads).toBeGreaterThan(0);
      expect(JSON.stringify([index.notes, index.chunks])).toBe(JSON.stringify([inline[budget].notes, inline[budget].chunks]));
    }
  });
});

import { chmodSync, cpSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, symlinkSync, writeFileSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import canonicalize from 'canonicalize';
import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { indexStats, indexVault } from '../src/indexer/build.js';
import { backlinks, chunksOf, getNote, outgoingLinks, readNoteLines } from '../src/indexer/lookup.js';
import { defaultIndexDir, snapshotId } from '../src/indexer/store.js';
import { sliceLines, splitLines } from '../src/notes/lines.js';
import { search } from '../src/search/search.js';
import { pathToFileURL } from 'node:url';
import { AETHERIA, FIXTURE_VAULT, REPO, hasShared, sharedNotice } from './helpers/shared.js';

const temps: string[] = [];
function temp(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  temps.push(dir);
  return dir;
}
function vaultWith(files: Record<string, string | Buffer>, name = 'Lore'): string {
  const v = join(temp('lt-idx-vault-'), name);
  mkdirSync(v);
  for (const [path, body] of Object.entries(files)) {
    mkdirSync(join(v, path, '..'), { recursive: true });
    writeFileSync(join(v, path), body);
  }
  return v;
}
afterEach(() => {
  while (temps.length) rmSync(temps.pop()!, { recursive: true, force: true });
});

const SMALL = {
  'Places/Harbor.md': '# Harbor\n\nThe harbor of [[Brine]] keeps the lantern fleet.\n',
  'Places/Brine.md': '# Brine\n\nBrine is a salt town. See [[Harbor#Harbor]].\n',
  'People/Vessa.md': '---\ntitle: Vessa Marrow\naliases: [The Warden]\n---\n# Vessa\n\nVessa guards [[Brine]] and sails to [[Nowhere Isle]].\n',
};

describe('indexVault', () => {
  it('indexes a vault into notes, chunks, resolved links and a snapshot_id over the manifest', async () => {
    const v = vaultWith(SMALL);
    const index = await indexVault(v, { indexDir: temp('lt-idx-') });
    expect(index.namespace).toBe('Lore');
    expect(index.manifest.map((f) => f.path)).toEqual(['People/Vessa.md', 'Places/Brine.md', 'Places/Harbor.md']);
    expect(index.notes.map((n) => n.title)).toEqual(['Vessa Marrow', 'Brine', 'Harbor']);
    expect(index.chunks.map((c) => [c.path, c.chunk_index, c.line_start, c.line_end])).toEqual([
      ['People/Vessa.md', 0, 5, 7], ['Places/Brine.md', 0, 1, 3], ['Places/Harbor.md', 0, 1, 3],
    ]);
    expect(index.links.map((l) => [l.source_path, l.line, l.raw, l.resolution.status])).toEqual([
      ['People/Vessa.md', 7, '[[Brine]]', 'resolved'],
      ['People/Vessa.md', 7, '[[Nowhere Isle]]', 'unresolved'],
      ['Places/Brine.md', 3, '[[Harbor#Harbor]]', 'resolved'],
      ['Places/Harbor.md', 3, '[[Brine]]', 'resolved'],
    ]);
    const expected = createHash('sha256').update(canonicalize({ namespace: 'Lore', files: index.manifest, assets: [] })!).digest('hex');
    expect(index.snapshot_id).toBe(expected);
    expect(snapshotId('Lore', index.manifest, [])).toBe(expected);
    expect(indexStats(index)).toMatchObject({ notes: 3, chunks: 3, links: 4, unresolved: 1, ambiguous: 0, parsed: 3, reused: 0, removed: 0, rebuilt: false });
  });

  it('uses --namespace over the config namespace over the folder name', async () => {
    const v = vaultWith({ ...SMALL, 'loretrace.config.json': '{"namespace":"Configured"}' });
    expect((await indexVault(v, { indexDir: temp('lt-idx-') })).namespace).toBe('Configured');
    expect((await indexVault(v, { indexDir: temp('lt-idx-'), namespace: 'Given' })).namespace).toBe('Given');
  });

  it('keeps the persisted index outside the vault, in the user cache by default', async () => {
    const v = vaultWith(SMALL);
    const cache = temp('lt-cache-');
    const index = await indexVault(v, { env: { XDG_CACHE_HOME: cache } });
    const dir = defaultIndexDir(index.root, 'Lore', { XDG_CACHE_HOME: cache });
    expect(indexStats(index)!.index_dir).toBe(dir);
    expect(dir.startsWith(join(cache, 'loretrace') + '/')).toBe(true);
    expect(existsSync(join(dir, 'index.json'))).toBe(true);
    expect(readdirSync(v).sort()).toEqual(['People', 'Places']);
    const viaEnv = await indexVault(v, { env: { LORETRACE_INDEX_DIR: join(cache, 'env-dir') } });
    expect(indexStats(viaEnv)!.index_dir).toBe(join(cache, 'env-dir'));
  });

  it('writes nothing with persist: false', async () => {
    const v = vaultWith(SMALL);
    const cache = temp('lt-cache-');
    const index = await indexVault(v, { persist: false, env: { XDG_CACHE_HOME: cache } });
    expect(indexStats(index)!.index_dir).toBeNull();
    expect(readdirSync(cache)).toEqual([]);
    expect(search(index, 'lantern fleet', { k: 1 })[0]!.path).toBe('Places/Harbor.md');
  });

  describe('bad input', () => {
    it('missing vault dir: throws vault_not_found with exit code 2 naming the path', async () => {
      await expect(indexVault('/nonexistent/AetheriaLore', { indexDir: temp('lt-idx-') })).rejects.toMatchObject({
        code: 'vault_not_found', exitCode: 2, message: 'vault directory not found: /nonexistent/AetheriaLore',
      });
    });

    it('empty vault: a valid empty index plus finding empty_vault', async () => {
      const v = vaultWith({});
      const index = await indexVault(v, { indexDir: temp('lt-idx-') });
      expect([index.notes, index.chunks, index.links, index.manifest]).toEqual([[], [], [], []]);
      expect(index.findings).toEqual([{ code: 'empty_vault', severity: 'warning', message: `vault ${v} contains no markdown notes; the index is empty` }]);
      expect(index.snapshot_id).toBe(createHash('sha256').update('{"assets":[],"files":[],"namespace":"Lore"}').digest('hex'));
      expect(search(index, 'anything')).toEqual([]);
    });

    it('unreadable file, simulated with a dangling symlink (tests run as root, and root reads chmod 000 files)', async () => {
      const v = vaultWith({ 'Ok.md': '# Ok\n', 'Locked.md': '# Locked\n' });
      chmodSync(join(v, 'Locked.md'), 0o000);
      symlinkSync(join(v, 'gone.md'), join(v, 'Dangling.md'));
      const index = await indexVault(v, { indexDir: temp('lt-idx-') });
      expect(index.findings).toEqual([
        { code: 'unreadable_file', severity: 'warning', path: 'Dangling.md', message: 'cannot read Dangling.md: dangling symbolic link; skipped' },
      ]);
      // As root the chmod 000 note is still readable and indexed; as another user it gives the same
      // `unreadable_file` finding with the errno (EACCES).
      const locked = process.getuid?.() === 0 ? ['Locked.md', 'Ok.md'] : ['Ok.md'];
      expect(index.manifest.map((f) => f.path)).toEqual(locked);
    });

    it('binary file named .md: listed with no chunks and no links, finding binary_file', async () => {
      const v = vaultWith({ 'Binary.md': Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0xff, 0xfe, 1, 2]) });
      const index = await indexVault(v, { indexDir: temp('lt-idx-') });
      expect(index.notes.map((n) => [n.path, n.chunk_count, n.line_count])).toEqual([['Binary.md', 0, 0]]);
      expect(index.findings).toEqual([
        { code: 'binary_file', severity: 'warning', path: 'Binary.md', message: 'Binary.md contains a NUL byte at byte 4: expected a text file; it is listed with no chunks and no links' },
      ]);
    });

    it('5 MB single-line note: under the default 8 MiB cap it is one chunk; over a lowered cap it is skipped with file_too_large', async () => {
      const v = vaultWith({ 'Huge Line.md': 'word '.repeat(1_000_000) });
      const capped = await indexVault(v, { indexDir: temp('lt-idx-'), config: { max_file_bytes: 4_194_304 } });
      expect(capped.notes).toEqual([]);
      expect(capped.findings.map((f) => [f.code, f.message])).toEqual([
        ['file_too_large', 'Huge Line.md is 5000000 bytes, over max_file_bytes 4194304; not parsed, chunked or searched (links to it resolve as too_large)'],
        ['empty_vault', `vault ${v} contains no markdown notes; the index is empty`],
      ].sort((a, b) => (a[0]! === 'empty_vault' ? -1 : 1) - (b[0]! === 'empty_vault' ? -1 : 1)));
      const raised = await indexVault(v, { indexDir: temp('lt-idx-') });
      expect(raised.chunks.map((c) => [c.chunk_index, c.line_start, c.line_end, c.word_count])).toEqual([[0, 1, 1, 1_000_000]]);
      expect(search(raised, 'word', { k: 1 }).map((h) => h.ref)).toEqual(['Lore:Huge Line.md#chunk0']);
    });

    it('10,000 links in one note: every one recorded with its column, all unresolved', async () => {
      const body = Array.from({ length: 10_000 }, (_, i) => `[[Target ${i}]]`).join(' ') + '\n';
      const v = vaultWith({ 'Many Links.md': body });
      const index = await indexVault(v, { indexDir: temp('lt-idx-') });
      const s = indexStats(index)!;
      expect([s.links, s.unresolved]).toEqual([10_000, 10_000]);
      expect(index.links[9_999]).toMatchObject({ line: 1, column: body.lastIndexOf('[[') + 1, raw: '[[Target 9999]]', resolution: { status: 'unresolved' } });
    });

    it('7-level heading nesting: six heading levels, the seventh `#######` line is text', async () => {
      const v = vaultWith({ 'Seven.md': '# L1\n## L2\n### L3\n#### L4\n##### L5\n###### L6\n####### L7 not a heading\ntext\n' });
      const index = await indexVault(v, { indexDir: temp('lt-idx-') });
      expect(index.chunks.map((c) => [c.chunk_index, c.heading_path.join('>'), c.line_start, c.line_end])).toEqual([
        [0, 'L1', 1, 1], [1, 'L1>L2', 2, 2], [2, 'L1>L2>L3', 3, 3], [3, 'L1>L2>L3>L4', 4, 4],
        [4, 'L1>L2>L3>L4>L5', 5, 5], [5, 'L1>L2>L3>L4>L5>L6', 6, 8],
      ]);
    });
  });

  describe('incremental', () => {
    it('re-parses only changed notes; edits, additions, deletions and renames show in search and links', async () => {
      const v = vaultWith(SMALL);
      const dir = temp('lt-idx-');
      const first = await indexVault(v, { indexDir: dir });
      expect(indexStats(first)).toMatchObject({ parsed: 3, reused: 0, removed: 0 });

      const again = await indexVault(v, { indexDir: dir });
      expect(indexStats(again)).toMatchObject({ parsed: 0, reused: 3, removed: 0 });
      expect(again.snapshot_id).toBe(first.snapshot_id);
      expect(JSON.stringify(search(again, 'lantern salt warden'))).toBe(JSON.stringify(search(first, 'lantern salt warden')));

      // edit
      writeFileSync(join(v, 'Places/Harbor.md'), '# Harbor\n\nThe harbor of [[Brine]] keeps the kelp barges.\n');
      const edited = await indexVault(v, { indexDir: dir });
      expect(indexStats(edited)).toMatchObject({ parsed: 1, reused: 2, removed: 0 });
      expect(edited.snapshot_id).not.toBe(first.snapshot_id);
      expect(search(edited, 'lantern fleet').map((h) => h.path)).toEqual([]);
      expect(search(edited, 'kelp barges').map((h) => h.ref)).toEqual(['Lore:Places/Harbor.md#chunk0']);

      // add: the unresolved [[Nowhere Isle]] now resolves
      writeFileSync(join(v, 'Places/Nowhere Isle.md'), '# Nowhere Isle\n\nFog and reefs.\n');
      const added = await indexVault(v, { indexDir: dir });
      expect(indexStats(added)).toMatchObject({ parsed: 1, reused: 3, removed: 0, unresolved: 0 });
      expect(backlinks(added, 'Places/Nowhere Isle.md').map((l) => [l.source_path, l.line])).toEqual([['People/Vessa.md', 7]]);

      // delete: gone from search, its backlinks unresolved again
      rmSync(join(v, 'Places/Nowhere Isle.md'));
      const deleted = await indexVault(v, { indexDir: dir });
      expect(indexStats(deleted)).toMatchObject({ parsed: 0, reused: 3, removed: 1, unresolved: 1 });
      expect(search(deleted, 'fog reefs')).toEqual([]);
      expect(getNote(deleted, 'Places/Nowhere Isle.md')).toBeUndefined();

      // rename Brine → Saltmarsh: links to [[Brine]] are re-resolved vault-wide (now unresolved)
      renameSync(join(v, 'Places/Brine.md'), join(v, 'Places/Saltmarsh.md'));
      const renamed = await indexVault(v, { indexDir: dir });
      expect(indexStats(renamed)).toMatchObject({ parsed: 1, reused: 2, removed: 1, unresolved: 3 });
      expect(search(renamed, 'salt town').map((h) => h.ref)).toEqual(['Lore:Places/Saltmarsh.md#chunk0']);
      expect(outgoingLinks(renamed, 'Places/Harbor.md').map((l) => l.resolution.status)).toEqual(['unresolved']);
      expect(backlinks(renamed, 'Places/Harbor.md').map((l) => l.source_path)).toEqual(['Places/Saltmarsh.md']);

      // a cold build of the same state agrees byte for byte
      const cold = await indexVault(v, { indexDir: temp('lt-idx-') });
      expect(cold.snapshot_id).toBe(renamed.snapshot_id);
      expect(JSON.stringify([cold.notes, cold.chunks, cold.links, cold.findings])).toBe(JSON.stringify([renamed.notes, renamed.chunks, renamed.links, renamed.findings]));
      expect(JSON.stringify(search(cold, 'salt harbor kelp warden'))).toBe(JSON.stringify(search(renamed, 'salt harbor kelp warden')));
    });
  });

  describe('corrupt or foreign index', () => {
    async function built() {
      const v = vaultWith(SMALL);
      const dir = temp('lt-idx-');
      await indexVault(v, { indexDir: dir });
      return { v, dir };
    }

    it('rebuilds a corrupt index.json with a warning', async () => {
      const { v, dir } = await built();
      writeFileSync(join(dir, 'index.json'), '{"schema_version": "1", "kind": tru');
      const index = await indexVault(v, { indexDir: dir });
      expect(index.findings[0]).toMatchObject({ code: 'index_rebuilt', severity: 'warning' });
      expect(index.findings[0]!.message).toMatch(new RegExp(`^persisted index in ${dir} was not used and is rebuilt: ${join(dir, 'index.json')} is not valid JSON`));
      expect(indexStats(index)).toMatchObject({ parsed: 3, reused: 0, rebuilt: true });
      expect(search(index, 'lantern fleet').map((h) => h.path)).toEqual(['Places/Harbor.md']);
      const next = await indexVault(v, { indexDir: dir });
      expect(next.findings.map((f) => f.code)).toEqual(['unresolved_link']);
    });

    it('rebuilds an index of another schema_version', async () => {
      const { v, dir } = await built();
      const m = JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8'));
      writeFileSync(join(dir, 'index.json'), JSON.stringify({ ...m, schema_version: '0' }));
      const index = await indexVault(v, { indexDir: dir });
      expect(index.findings[0]!.message).toBe(`persisted index in ${dir} was not used and is rebuilt: ${join(dir, 'index.json')} has schema_version "0", expected "3"`);
    });

    it('rebuilds when a data file is damaged', async () => {
      const { v, dir } = await built();
      const notesFile = readdirSync(join(dir, 'data')).find((n) => n.startsWith('notes-'))!;
      writeFileSync(join(dir, 'data', notesFile), 'garbage\n');
      writeFileSync(join(v, 'Places/Harbor.md'), '# Harbor\n\nchanged\n');
      const index = await indexVault(v, { indexDir: dir });
      expect(index.findings[0]).toMatchObject({ code: 'index_rebuilt' });
      expect(index.findings[0]!.message).toContain(`data file ${notesFile} is damaged`);
      expect(indexStats(index)).toMatchObject({ parsed: 3, rebuilt: true });
    });

    it('rebuilds when the options (config) differ', async () => {
      const { v, dir } = await built();
      const index = await indexVault(v, { indexDir: dir, config: { chunk_word_budget: 50 } });
      expect(index.findings[0]!.message).toBe(`persisted index in ${dir} was not used and is rebuilt: it was built with other options (config, namespace or tokenizer)`);
    });

    it('falls back to an in-memory search index when a search shard vanishes after loading', async () => {
      const { v, dir } = await built();
      const warm = await indexVault(v, { indexDir: dir });
      const expected = JSON.stringify(search(await indexVault(v, { persist: false }), 'lantern harbor'));
      for (const n of readdirSync(join(dir, 'data'))) if (n.startsWith('search-l') || n.startsWith('search-h')) rmSync(join(dir, 'data', n));
      expect(JSON.stringify(search(warm, 'lantern harbor'))).toBe(expected);
    });
  });

  it('is deterministic: two cold runs give the same snapshot_id and byte-identical search JSON', async () => {
    const a = await indexVault(FIXTURE_VAULT, { indexDir: temp('lt-idx-') });
    const b = await indexVault(FIXTURE_VAULT, { indexDir: temp('lt-idx-') });
    expect(a.snapshot_id).toBe(b.snapshot_id);
    expect(JSON.stringify(search(a, 'charter guild harbor', { k: 20 }))).toBe(JSON.stringify(search(b, 'charter guild harbor', { k: 20 })));
    expect(JSON.stringify(a.links)).toBe(JSON.stringify(b.links));
  });
});

const DIST_BUILD = join(REPO, 'dist', 'indexer', 'build.js');
describe.skipIf(!existsSync(DIST_BUILD))(`indexVault with worker threads (needs the dist build: ${existsSync(DIST_BUILD) ? 'present' : 'run npm run build'})`, () => {
  it('gives the same snapshot_id, records, links, findings, search JSON and persisted files with and without threads', async () => {
    type Api = { indexVault: typeof indexVault; indexStats: typeof indexStats };
    const dist = (await import(pathToFileURL(DIST_BUILD).href)) as Api;
    const distSearch = ((await import(pathToFileURL(join(REPO, 'dist', 'search', 'search.js')).href)) as { search: typeof search }).search;
    const vault = hasShared ? AETHERIA : FIXTURE_VAULT; // AetheriaLore: 148 notes = 3 batches over 2+ threads
    const [dirT, dirI] = [temp('lt-idx-thr-'), temp('lt-idx-inl-')];
    const threaded = await dist.indexVault(vault, { indexDir: dirT, workers: true });
    const inline = await dist.indexVault(vault, { indexDir: dirI, workers: false });
    expect(dist.indexStats(threaded)!.threads).toBeGreaterThan(0);
    expect(dist.indexStats(inline)!.threads).toBe(0);
    expect(threaded.snapshot_id).toBe(inline.snapshot_id);
    expect(JSON.stringify([threaded.notes, threaded.chunks, threaded.links, threaded.findings])).toBe(JSON.stringify([inline.notes, inline.chunks, inline.links, inline.findings]));
    for (const q of ['Cold Wake Panic delayed heat dumps', 'charter guild harbor', 'tidew']) {
      expect(JSON.stringify(distSearch(threaded, q, { k: 20 }))).toBe(JSON.stringify(distSearch(inline, q, { k: 20 })));
    }
    // Content-addressed data files: identical names ⇒ identical bytes.
    expect(readdirSync(join(dirT, 'data')).sort()).toEqual(readdirSync(join(dirI, 'data')).sort());
  });
});

describe('lookup', () => {
  it('getNote, chunksOf, outgoingLinks and backlinks answer by path', async () => {
    const index = await indexVault(vaultWith(SMALL), { indexDir: temp('lt-idx-') });
    expect(getNote(index, 'People/Vessa.md')).toMatchObject({ title: 'Vessa Marrow', aliases: ['The Warden'] });
    expect(getNote(index, 'Nope.md')).toBeUndefined();
    expect(chunksOf(index, 'People/Vessa.md').map((c) => c.heading_path)).toEqual([['Vessa']]);
    expect(chunksOf(index, 'Nope.md')).toEqual([]);
    expect(outgoingLinks(index, 'People/Vessa.md').map((l) => l.target)).toEqual(['Brine', 'Nowhere Isle']);
    expect(backlinks(index, 'Places/Brine.md').map((l) => [l.source_path, l.line, l.column])).toEqual([['People/Vessa.md', 7, 14], ['Places/Harbor.md', 3, 15]]);
  });

  it('readNoteLines returns the lines on disk and throws stale_file once the file changed', async () => {
    const v = vaultWith(SMALL);
    const index = await indexVault(v, { indexDir: temp('lt-idx-') });
    expect(await readNoteLines(index, 'Places/Harbor.md')).toEqual(['# Harbor', '', 'The harbor of [[Brine]] keeps the lantern fleet.']);
    await expect(readNoteLines(index, 'Nope.md')).rejects.toMatchObject({ code: 'not_found', message: 'Lore:Nope.md is not a note of the index' });
    writeFileSync(join(v, 'Places/Harbor.md'), 'changed\n');
    await expect(readNoteLines(index, 'Places/Harbor.md')).rejects.toMatchObject({ code: 'stale_file', message: expect.stringMatching(/^Places\/Harbor\.md changed since it was indexed/) });
  });
});

describe.skipIf(!hasShared)(`indexVault on the real AetheriaLore vault (${hasShared ? 'present' : sharedNotice})`, () => {
  it('indexes 148 notes with the measured chunk, link and unresolved counts; the chunk invariant holds for every chunk', async () => {
    const index = await indexVault(AETHERIA, { indexDir: temp('lt-idx-real-') });
    expect(index.namespace).toBe('AetheriaLore');
    const s = indexStats(index)!;
    expect([s.notes, s.chunks, s.links, s.unresolved, s.ambiguous, s.broken_fragments]).toEqual([148, 546, 1430, 6, 0, 0]);
    for (const note of index.notes) {
      const lines = splitLines(readFileSync(join(AETHERIA, note.path), 'utf8'));
      expect(note.line_count).toBe(lines.length);
      let prevEnd = 0;
      for (const c of chunksOf(index, note.path)) {
        expect(c.line_start).toBeGreaterThan(prevEnd);
        expect(c.line_end).toBeLessThanOrEqual(lines.length);
        expect(c.text).toBe(sliceLines(lines, c.line_start, c.line_end));
        prevEnd = c.line_end;
      }
    }
  });

  it('search "Cold Wake Panic delayed heat dumps" --k 3 returns the Cold Wake Panic note first', async () => {
    const index = await indexVault(AETHERIA, { indexDir: temp('lt-idx-real-') });
    const hits = search(index, 'Cold Wake Panic delayed heat dumps', { k: 3 });
    expect(hits.map((h) => [h.ref, h.line_start, h.line_end])).toEqual([
      ['AetheriaLore:Aetheria/Worldbuilding/Pre-Elysium/Timeline/Events/Cold Wake Panic.md#chunk0', 1, 9],
      // Then the query's other words decide: the name a chunk repeats ("The [[Cold Wake Panic]] reveals …"
      // elsewhere) is the entity prior's evidence for the event's own note, not phrase evidence for the
      // chunk, so the sections about delaying and dumping heat come next on their BM25.
      ['AetheriaLore:Aetheria/Worldbuilding/Politics/Thermal Signature Warfare.md#chunk1', 5, 15],
      ['AetheriaLore:Aetheria/Brainstorming/Technology/Heat Pumps and Thermal Transport.md#chunk4', 35, 41],
    ]);
  });
});

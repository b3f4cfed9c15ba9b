import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { REPO } from './helpers/shared.js';

let vault: string;
let indexDir: string;
const temps: string[] = [];
beforeAll(() => {
  const base = mkdtempSync(join(tmpdir(), 'lt-cli-'));
  temps.push(base);
  vault = join(base, 'Isles');
  indexDir = join(base, 'index');
  for (const [p, body] of Object.entries({
    'Harbor.md': '# Harbor\n\nThe harbor of [[Brine]] keeps the lantern fleet.\n\n## Docks\n\nSee [[Brine#Tides]] and [[Nowhere]]. ^docks\n',
    'Brine.md': '# Brine\n\nA salt town.\n\n## Tides\n\nTides rise twice.\n',
  })) {
    mkdirSync(join(vault, p, '..'), { recursive: true });
    writeFileSync(join(vault, p), body);
  }
});
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

async function run(argv: string[], env: NodeJS.ProcessEnv = {}, isTTY = false) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: { ...env }, cwd: REPO, isTTY });
  return { code, stdout, stderr };
}
/** A fresh vault folder `<tmp>/<name>` with the given files (relative path → text or bytes). */
function makeVault(name: string, files: Record<string, string | Uint8Array>): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'lt-cli-v-')), name);
  temps.push(join(dir, '..'));
  mkdirSync(dir, { recursive: true });
  for (const [p, body] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), body);
  }
  return dir;
}
/** A fresh, empty index directory. */
const freshDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'lt-cli-i-'));
  temps.push(d);
  return d;
};
const V = () => ['--lore', vault, '--index-dir', indexDir];

describe('loretrace index', () => {
  it('prints counts and snapshot_id as JSON, parsed then reused', async () => {
    const first = await run(['index', ...V(), '--json']);
    expect(first.code).toBe(0);
    const j = JSON.parse(first.stdout);
    expect(j).toMatchObject({ namespace: 'Isles', files: 2, notes: 2, chunks: 4, links: 3, unresolved: 1, ambiguous: 0, broken_fragments: 0, parsed: 2, reused: 0, removed: 0, index_dir: indexDir, findings_by_code: { unresolved_link: 1 } });
    expect(j.snapshot_id).toMatch(/^[0-9a-f]{64}$/);
    const second = JSON.parse((await run(['index', ...V(), '--json'])).stdout);
    expect([second.parsed, second.reused, second.snapshot_id]).toEqual([0, 2, j.snapshot_id]);
  });

  it('prints a readable summary', async () => {
    const r = await run(['index', ...V()]);
    expect(r.stdout).toContain('  links        3 (unresolved 1, ambiguous 0, broken fragments 0)\n');
    expect(r.stdout).toContain('  findings     1 (unresolved_link ×1)\n');
  });

  it('takes the index dir from LORETRACE_INDEX_DIR', async () => {
    const dir = join(temps[0]!, 'env-index');
    const r = await run(['index', '--lore', vault, '--json'], { LORETRACE_INDEX_DIR: dir });
    expect(JSON.parse(r.stdout).index_dir).toBe(dir);
  });

  it('exits 2 with one line for a missing vault, and for a missing --lore', async () => {
    expect(await run(['index', '--lore', '/nonexistent/vault', '--index-dir', indexDir])).toEqual({
      code: 2, stdout: '', stderr: 'loretrace: vault directory not found: /nonexistent/vault [vault_not_found]\n',
    });
    const r = await run(['index']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("required option '--lore <dir>' not specified");
  });

  it('--namespace names the refs instead of the vault folder', async () => {
    const dir = freshDir();
    const j = JSON.parse((await run(['index', '--lore', vault, '--index-dir', dir, '--namespace', 'Archipelago', '--json'])).stdout);
    expect([j.namespace, j.notes]).toEqual(['Archipelago', 2]);
    const hits = JSON.parse((await run(['search', 'salt', 'town', '--lore', vault, '--index-dir', dir, '--namespace', 'Archipelago', '--k', '1', '--json'])).stdout);
    expect(hits.results.map((h: { ref: string }) => h.ref)).toEqual(['Archipelago:Brine.md#chunk0']);
  });

  it('--config adds namespace and class rules that search --class and links show', async () => {
    const cfg = join(freshDir(), 'isles.config.json');
    writeFileSync(cfg, JSON.stringify({ namespace: 'Reefs', class_rules: [{ glob: 'Harbor.md', classes: ['port'] }] }));
    const dir = freshDir();
    const V2 = ['--lore', vault, '--index-dir', dir, '--config', cfg];
    const links = JSON.parse((await run(['links', 'Reefs:Harbor.md', ...V2, '--json'])).stdout);
    expect([links.ref, links.classes]).toEqual(['Reefs:Harbor.md', ['port']]);
    const refs = async (...extra: string[]) =>
      JSON.parse((await run(['search', 'tides', ...V2, ...extra, '--json'])).stdout).results.map((h: { ref: string }) => h.ref);
    expect(await refs()).toEqual(['Reefs:Brine.md#chunk1', 'Reefs:Harbor.md#chunk1']);
    expect(await refs('--class', 'port')).toEqual(['Reefs:Harbor.md#chunk1']);
    expect(await run(['index', '--lore', vault, '--index-dir', dir, '--config', join(dir, 'missing.json')])).toEqual({
      code: 2, stdout: '', stderr: `loretrace: config file not found: ${join(dir, 'missing.json')} [config_not_found]\n`,
    });
  });

  it('--include replaces the config include and --exclude adds to the config exclude', async () => {
    const only = JSON.parse((await run(['index', '--lore', vault, '--index-dir', freshDir(), '--include', 'Brine.md', '--json'])).stdout);
    expect([only.notes, only.chunks, only.links]).toEqual([1, 2, 0]);
    const without = JSON.parse((await run(['index', '--lore', vault, '--index-dir', freshDir(), '--exclude', 'Brine.md', '--json'])).stdout);
    expect([without.notes, without.links, without.unresolved]).toEqual([1, 3, 3]);
    const cfg = join(freshDir(), 'exclude.config.json');
    writeFileSync(cfg, JSON.stringify({ exclude: ['Harbor.md'] }));
    const both = JSON.parse((await run(['index', '--lore', vault, '--index-dir', freshDir(), '--config', cfg, '--exclude', 'Brine.md', '--json'])).stdout);
    expect([both.notes, both.findings_by_code]).toEqual([0, { empty_vault: 1 }]);
    expect(await run(['index', '--lore', vault, '--index-dir', freshDir(), '--include', ''])).toEqual({
      code: 2, stdout: '', stderr: 'loretrace: option --include must be a non-empty glob (got ""); see \'loretrace index --help\' [usage]\n',
    });
  });

  it('lists file-level findings with their messages in human output (binary, not UTF-8, empty vault)', async () => {
    const bad = makeVault('Bad', {
      'Bin.md': new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x00, 0x0a]),
      'Latin.md': new Uint8Array([0x63, 0x61, 0x66, 0xe9, 0x0a]),
      'Ok.md': '# Ok\n\nSee [[Gone]].\n',
    });
    const r = await run(['index', '--lore', bad, '--index-dir', freshDir()]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('  files        3 (other files 0)\n');
    expect(r.stdout).toContain(
      '  findings     3 (binary_file ×1, not_utf8 ×1, unresolved_link ×1)\n' +
      '    warning binary_file: Bin.md contains a NUL byte at byte 4: expected a text file; it is listed with no chunks and no links\n' +
      '    warning not_utf8: Latin.md:1: byte 3 is not valid UTF-8: expected UTF-8 text; the note is listed with no chunks and no links\n',
    );
    // The link finding is listed apart, after the file-level ones.
    expect(r.stdout.endsWith('  broken and ambiguous links (1)\n    warning unresolved_link: unresolved wikilink [[Gone]] in Ok.md:3:5: no note or file matches "Gone"\n')).toBe(true);
    const empty = makeVault('Nothing', {});
    const e = await run(['index', '--lore', empty, '--index-dir', freshDir()]);
    expect(e.code).toBe(0);
    expect(e.stdout).toContain(`    warning empty_vault: vault ${empty} contains no markdown notes; the index is empty\n`);
  });

  it('shows a progress bar on stderr on a terminal while more than 200 notes are parsed, and never otherwise', async () => {
    const notes: Record<string, string> = {};
    for (let i = 0; i < 201; i++) notes[`N${String(i).padStart(3, '0')}.md`] = `# Note ${i}\n\nBody ${i}.\n`;
    const big = makeVault('Big', notes);
    const dir = freshDir();
    const tty = await run(['index', '--lore', big, '--index-dir', dir, '--json'], {}, true);
    expect([tty.code, JSON.parse(tty.stdout).parsed]).toEqual([0, 201]);
    expect(tty.stderr).toContain('parsing ');
    expect(tty.stderr).toContain(' 0/201 notes');
    expect(tty.stderr).toContain(' 201/201 notes');
    expect(tty.stderr.endsWith('\x1b[2K')).toBe(true); // the bar clears its line when done
    // Nothing to parse (every note reused): no bar, even on a terminal.
    expect((await run(['index', '--lore', big, '--index-dir', dir, '--json'], {}, true)).stderr).toBe('');
    // Not a terminal: no bar.
    expect((await run(['index', '--lore', big, '--index-dir', freshDir(), '--json'])).stderr).toBe('');
    // 200 notes on a terminal: no bar.
    rmSync(join(big, 'N200.md'));
    expect((await run(['index', '--lore', big, '--index-dir', freshDir(), '--json'], {}, true)).stderr).toBe('');
  });

  it('warns on stderr when a corrupt index is rebuilt', async () => {
    const dir = join(temps[0]!, 'corrupt');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'index.json'), 'nonsense');
    const r = await run(['index', '--lore', vault, '--index-dir', dir, '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^loretrace: warning: persisted index in .* is not valid JSON .*\[index_rebuilt\]\n$/);
  });
});

describe('loretrace search', () => {
  it('prints exactly { snapshot_id, results, skipped } with the hit fields (skipped: [] with no over-cap note)', async () => {
    const r = await run(['search', 'lantern', 'fleet', ...V(), '--k', '1', '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(Object.keys(j)).toEqual(['snapshot_id', 'results', 'skipped']);
    expect(j.skipped).toEqual([]);
    expect(j.results).toEqual([{
      ref: 'Isles:Harbor.md#chunk0', path: 'Harbor.md', chunk_index: 0, line_start: 1, line_end: 3, heading_path: ['Harbor'],
      score: j.results[0].score, text: '# Harbor\n\nThe harbor of [[Brine]] keeps the lantern fleet.',
    }]);
  });

  it('filters with --prefix (namespace allowed) and --class, and rejects a bad --k', async () => {
    const pre = JSON.parse((await run(['search', 'salt', ...V(), '--prefix', 'Isles:Harbor.md', '--json'])).stdout);
    expect(pre.results).toEqual([]);
    const cls = JSON.parse((await run(['search', 'salt', ...V(), '--class', 'nothing', '--json'])).stdout);
    expect(cls.results).toEqual([]);
    expect(await run(['search', 'salt', ...V(), '--k', 'ten'])).toEqual({ code: 2, stdout: '', stderr: 'loretrace: option --k must be an integer ≥ 1 (got "ten"); see \'loretrace search --help\' [usage]\n' });
  });

  it("names a chunk before the note's first heading by the note's file name and (introduction)", async () => {
    // lore-fixtures/NameLookupLore/Vellacourt.md opens with an epigraph and a paragraph, no H1: chunk 0 has no heading path.
    const r = await run(['search', 'Vellacourt', '--lore', join(REPO, 'lore-fixtures', 'NameLookupLore'), '--index-dir', freshDir(), '--k', '2']);
    const score = (i: number) => [...r.stdout.matchAll(/score ([\d.]+)/g)][i]![1];
    expect(r.stdout).toBe(
      `1. NameLookupLore:Vellacourt.md#chunk0  (score ${score(0)})\n   lines 1-3 · Vellacourt (introduction)\n` +
        '   1 │ *"Pay the river, and the river lets you pass."*\n' +
        '   3 │ [[Vellacourt]] is the toll city of the lower river, where every barge is weighed and taxed before i…\n' +
        `2. NameLookupLore:Vellacourt.md#chunk1  (score ${score(1)})\n   lines 5-7 · A Life in Vellacourt\n` +
        '   5 │ ### A Life in Vellacourt\n   7 │ Children in Vellacourt grow up on the quays, and every Vellacourt family keeps a toll book.\n',
    );
  });

  it('prints numbered human results', async () => {
    const r = await run(['search', 'tides', ...V(), '--k', '1']);
    expect(r.stdout).toBe('1. Isles:Brine.md#chunk1  (score ' + r.stdout.match(/score ([\d.]+)/)![1] + ')\n   lines 5-7 · Brine › Tides\n   5 │ ## Tides\n   7 │ Tides rise twice.\n');
  });

  it('numbers the preview lines (a blank line shows as a gap) and says how many non-blank lines it left out', async () => {
    const dir = freshDir();
    mkdirSync(join(dir, 'V'));
    writeFileSync(join(dir, 'V', 'Dock.md'), '# Dock\n\nOne dock line.\nTwo dock lines.\n\nThree dock lines.\nFour dock lines.\n');
    const r = await run(['search', 'dock', '--lore', join(dir, 'V'), '--index-dir', join(dir, 'idx'), '--k', '1']);
    expect(r.stdout).toBe(
      `1. V:Dock.md#chunk0  (score ${r.stdout.match(/score ([\d.]+)/)![1]})\n   lines 1-7 · Dock\n` +
        '   1 │ # Dock\n   3 │ One dock line.\n   4 │ Two dock lines.\n     ⋮ 2 more non-blank lines to line 7: loretrace show V:Dock.md#chunk0\n',
    );
  });

  it('gives byte-identical JSON on repeated runs, and from the built bin', async () => {
    const a = (await run(['search', 'harbor salt tides', ...V(), '--json'])).stdout;
    const b = (await run(['search', 'harbor salt tides', ...V(), '--json'])).stdout;
    expect(b).toBe(a);
    const spawned = execFileSync('node', [join(REPO, 'bin', 'loretrace.js'), 'search', 'harbor salt tides', ...V(), '--json'], { encoding: 'utf8' });
    expect(spawned).toBe(a);
  });
});

describe('loretrace show', () => {
  it('prints the exact lines of #chunkN, #Heading, #L-range, #^block and a whole note', async () => {
    const show = async (ref: string) => JSON.parse((await run(['show', ref, ...V(), '--json'])).stdout);
    expect(await show('Isles:Harbor.md#chunk1')).toEqual({ ref: 'Isles:Harbor.md#chunk1', path: 'Harbor.md', line_start: 5, line_end: 7, text: '## Docks\n\nSee [[Brine#Tides]] and [[Nowhere]]. ^docks' });
    expect(await show('Isles:Brine.md#Tides')).toMatchObject({ line_start: 5, line_end: 7, text: '## Tides\n\nTides rise twice.' });
    expect(await show('Isles:Harbor.md#L3-L3')).toMatchObject({ line_start: 3, line_end: 3, text: 'The harbor of [[Brine]] keeps the lantern fleet.' });
    expect(await show('Isles:Harbor.md#^docks')).toMatchObject({ line_start: 7, line_end: 7 });
    expect(await show('Isles:Brine.md')).toMatchObject({ line_start: 1, line_end: 7 });
  });

  it('numbers lines in human mode', async () => {
    expect((await run(['show', 'Isles:Brine.md#Tides', ...V()])).stdout).toBe('Isles:Brine.md#Tides  (lines 5-7)\n5 │ ## Tides\n6 │\n7 │ Tides rise twice.\n');
  });

  it('reads a note whose file name is NFD on disk through its NFC ref', async () => {
    const dir = makeVault('Nfd', { ['Cafe\u0301 Noir.md']: '# Café Noir\n\nBlack coffee.\n' });
    const r = await run(['show', 'Nfd:Café Noir.md#L3', '--lore', dir, '--index-dir', freshDir(), '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ ref: 'Nfd:Café Noir.md#L3', path: 'Café Noir.md', line_start: 3, line_end: 3, text: 'Black coffee.' });
  });

  it('exits 1 for a ref that does not exist', async () => {
    const r = await run(['show', 'Isles:Nope.md', ...V()]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe('loretrace: ref Isles:Nope.md: no note Nope.md in vault Isles; no note has that title or alias either [not_found]\n');
  });
});

describe('loretrace links', () => {
  it('lists outgoing and incoming links with classes, lines and resolution', async () => {
    const j = JSON.parse((await run(['links', 'Isles:Brine.md', ...V(), '--json'])).stdout);
    expect(j.ref).toBe('Isles:Brine.md');
    expect(j.outgoing).toEqual([]);
    expect(j.incoming.map((l: { source_path: string; line: number; raw: string; resolution: { status: string } }) => [l.source_path, l.line, l.raw, l.resolution.status]))
      .toEqual([['Harbor.md', 3, '[[Brine]]', 'resolved'], ['Harbor.md', 7, '[[Brine#Tides]]', 'resolved']]);
    const h = JSON.parse((await run(['links', 'Isles:Harbor.md#Docks', ...V(), '--json'])).stdout);
    expect(h.outgoing.map((l: { line: number; column: number; raw: string; resolution: { status: string } }) => [l.line, l.column, l.raw, l.resolution.status]))
      .toEqual([[7, 5, '[[Brine#Tides]]', 'resolved'], [7, 25, '[[Nowhere]]', 'unresolved']]);
  });

  it('prints a readable list', async () => {
    const r = await run(['links', 'Isles:Harbor.md', ...V()]);
    expect(r.stdout).toContain('Outgoing (3):\n  L3:15  wikilink prose  [[Brine]] → Brine.md\n');
    expect(r.stdout).toContain('  L7:25  wikilink prose  [[Nowhere]] → unresolved\n');
    expect(r.stdout).toContain('Incoming (0):\n');
  });
});

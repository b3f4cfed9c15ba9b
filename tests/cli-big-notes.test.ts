/**
 * Notes over `max_file_bytes` through the CLI, on lore-fixtures/BigNoteLore (its loretrace.config.json
 * lowers the cap to 1024 bytes; `Harbor/Tide Ledger.md` is 3246 bytes, 62 lines): `search` names the note it
 * skipped, `show #L…` streams a bounded range of it, any other ref of it is `note_too_large`
 * (docs/PARSING.md "Big notes").
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { FIXTURES, REPO } from './helpers/shared.js';

const VAULT = join(FIXTURES, 'BigNoteLore');
const indexDir = mkdtempSync(join(tmpdir(), 'lt-big-'));
afterAll(() => rmSync(indexDir, { recursive: true, force: true }));

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await main([...argv, '--lore', VAULT, '--index-dir', indexDir], {
    stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, cwd: REPO, isTTY: false,
  });
  return { code, stdout, stderr };
}

const ENTRY = (n: number) => `Entry ${n}: the tide rose over the harbor wall at dusk.`;

describe('search over a vault with an over-cap note', () => {
  it('names the skipped note in a final line, and in skipped[] with --json', async () => {
    const human = await run('search', 'tide', 'harbor');
    expect(human.code).toBe(0);
    expect(human.stdout.split('\n').slice(-2)).toEqual(['Not searched (over max_file_bytes, not indexed): Harbor/Tide Ledger.md (3246 bytes)', '']);
    const json = await run('search', 'tide', '--json');
    const out = JSON.parse(json.stdout);
    expect(out.results.map((r: { ref: string }) => r.ref)).toEqual(['BigNoteLore:Harbor/Quay.md#chunk0']);
    expect(out.skipped).toEqual([{ path: 'Harbor/Tide Ledger.md', reason: 'too_large', bytes: 3246 }]);
    expect(Object.keys(out)).toEqual(['snapshot_id', 'results', 'skipped']);
  });

  it('keeps to the --prefix: an over-cap note outside it is not listed', async () => {
    const out = JSON.parse((await run('search', 'tide', '--json', '--prefix', 'Harbor/Quay.md')).stdout);
    expect(out.skipped).toEqual([]);
    const none = await run('search', 'zzzunknownword');
    expect(none.stdout).toBe('No results for "zzzunknownword" in BigNoteLore.\nNot searched (over max_file_bytes, not indexed): Harbor/Tide Ledger.md (3246 bytes)\n');
  });
});

describe('show of an over-cap note', () => {
  it('serves a line range with exact line numbers and says the note is not indexed', async () => {
    const human = await run('show', 'BigNoteLore:Harbor/Tide Ledger.md#L2-L4');
    expect([human.code, human.stderr]).toEqual([0, '']);
    expect(human.stdout).toBe([
      'BigNoteLore:Harbor/Tide Ledger.md#L2-L4  (lines 2-4)',
      'note: Harbor/Tide Ledger.md is 3246 bytes, over max_file_bytes: not indexed (no chunk or heading refs); these lines are read from the file',
      '2 │',
      `3 │ ${ENTRY(1)}`,
      `4 │ ${ENTRY(2)}`,
      '',
    ].join('\n'));
    const json = await run('show', 'Harbor/Tide Ledger.md#L61-L62', '--json');
    expect(JSON.parse(json.stdout)).toEqual({
      ref: 'BigNoteLore:Harbor/Tide Ledger.md#L61-L62', path: 'Harbor/Tide Ledger.md', line_start: 61, line_end: 62,
      text: `${ENTRY(59)}\n${ENTRY(60)}`, not_indexed: { reason: 'too_large', bytes: 3246 },
    });
  });

  it('a range past the last line is not_found with the line count', async () => {
    const r = await run('show', 'Harbor/Tide Ledger.md#L61-L63');
    expect([r.code, r.stdout]).toEqual([1, '']);
    expect(r.stderr).toBe('loretrace: ref BigNoteLore:Harbor/Tide Ledger.md#L61-L63: Harbor/Tide Ledger.md has 62 lines, so L61-L63 is outside it [not_found]\n');
  });

  it('a heading, chunk or whole-note ref is note_too_large: only line ranges can be served', async () => {
    for (const ref of ['Harbor/Tide Ledger.md#Tide Ledger', 'Harbor/Tide Ledger.md#chunk0', 'Harbor/Tide Ledger.md']) {
      const r = await run('show', ref);
      expect([r.code, r.stdout]).toEqual([1, '']);
      expect(r.stderr).toBe(`loretrace: ref BigNoteLore:${ref}: Harbor/Tide Ledger.md is 3246 bytes, over max_file_bytes, so it is not indexed (no chunk, heading or block refs); only a line range such as #L1-L50 can be served for it [note_too_large]\n`);
    }
  });
});

describe('an over-cap note by name', () => {
  it('is found by its file name (it has no parsed title or aliases), for show; links says its links are not known', async () => {
    const byName = await run('show', 'tide ledger#L3-L3', '--json');
    expect(JSON.parse(byName.stdout)).toEqual({ ref: 'BigNoteLore:Harbor/Tide Ledger.md#L3', path: 'Harbor/Tide Ledger.md', line_start: 3, line_end: 3, text: ENTRY(1), not_indexed: { reason: 'too_large', bytes: 3246 } });
    const human = await run('show', 'Tide Ledger#L3-L3');
    expect(human.stdout.split('\n')[0]).toBe('BigNoteLore:Harbor/Tide Ledger.md#L3  (lines 3-3, file name "Tide Ledger")');
    expect((await run('show', 'Tide Ledgr')).stderr).toBe('loretrace: ref BigNoteLore:Tide Ledgr: no note Tide Ledgr in vault BigNoteLore; no note has that title or alias either — did you mean BigNoteLore:Harbor/Tide Ledger.md ("Tide Ledger")? [not_found]\n');
    for (const ref of ['Tide Ledger', 'BigNoteLore:Harbor/Tide Ledger.md', 'Harbor/Tide Ledger.md#L1-L5']) {
      expect(await run('links', ref)).toEqual({ code: 1, stdout: '', stderr: 'loretrace: BigNoteLore:Harbor/Tide Ledger.md is 3246 bytes, over max_file_bytes, so it is not indexed and its links are not known; read its lines with loretrace show "<note>#L1-L50" [note_too_large]\n' });
    }
  });

  it('an NFD-named over-cap note is found by its NFC name and path, and its lines are read from the NFD file', async () => {
    const vault = mkdtempSync(join(tmpdir(), 'lt-big-nfd-'));
    const dir = mkdtempSync(join(tmpdir(), 'lt-big-nfd-index-'));
    try {
      writeFileSync(join(vault, 'loretrace.config.json'), '{ "max_file_bytes": 1024 }\n');
      mkdirSync(join(vault, 'Harbor'));
      const nfd = 'Cafe\u0301 Ledger.md';
      const lines = ['# Café Ledger', '', ...Array.from({ length: 40 }, (_, i) => ENTRY(i + 1))];
      writeFileSync(join(vault, 'Harbor', nfd), lines.join('\n') + '\n');
      const show = async (...argv: string[]) => {
        let stdout = '';
        let stderr = '';
        const code = await main([...argv, '--lore', vault, '--namespace', 'NfdLore', '--index-dir', dir], { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: {}, cwd: REPO, isTTY: false });
        return { code, stdout, stderr };
      };
      const bytes = Buffer.byteLength(lines.join('\n') + '\n');
      const expected = { ref: 'NfdLore:Harbor/Caf\u00e9 Ledger.md#L3-L4', path: 'Harbor/Caf\u00e9 Ledger.md', line_start: 3, line_end: 4, text: `${ENTRY(1)}\n${ENTRY(2)}`, not_indexed: { reason: 'too_large', bytes } };
      expect(JSON.parse((await show('show', 'Caf\u00e9 Ledger#L3-L4', '--json')).stdout)).toEqual(expected);
      expect(JSON.parse((await show('show', nfd.replace(/\.md$/, '') + '#L3-L4', '--json')).stdout)).toEqual(expected);
      expect(JSON.parse((await show('show', 'Harbor/Caf\u00e9 Ledger.md#L3-L4', '--json')).stdout)).toEqual(expected);
      expect((await show('search', 'tide', '--json')).stdout).toContain('"path": "Harbor/Caf\u00e9 Ledger.md"');
    } finally {
      rmSync(vault, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Notes over `max_file_bytes` through the CLI, on lore-fixtures/BigNoteLore (its loretrace.config.json
 * lowers the cap to 1024 bytes; `Harbor/Tide Ledger.md` is 3246 bytes, 62 lines): `search` names the note it
 * skipped, `show #L…` streams a bounded range of it, any other ref of it is `note_too_large`
 * (docs/PARSING.md "Big notes").
 */
import { mkdtempSync, rmSync } from 'node:fs';
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
      '2 │ ',
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

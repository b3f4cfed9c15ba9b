/**
 * What the CLI prints cannot spoof a terminal line (README "Security"): a vault's control and bidi
 * characters (C0 except \n and \t, DEL, C1, U+202A–U+202E, U+2066–U+2069) reach stdout and stderr as a
 * visible `\uXXXX`, in human output and `--json` alike (where it is JSON's escape, so the JSON parses to
 * the vault's exact text). The vault is written at run time (a committed file holding ESC and U+202E would
 * be as hostile to a reviewer's terminal as to loretrace's).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { escapeTerminalText } from '../src/cli/context.js';
import { makeVault } from './helpers/temp-vault.js';

const TITLE = 'Harbor \u202Eeciffo\u001B[31m red';
const BODY = `# ${TITLE}\n\nThe harbor officer\trings the \u0007 bell \u0085 at \u2066dusk\u2069.\r\n`;

async function run(argv: string[]) {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { ...process.env, LORETRACE_INDEX_DIR: '' }, isTTY: false });
  return { code, out, err };
}

describe('escapeTerminalText', () => {
  it('writes every C0 (but \\n and \\t), DEL, C1 and bidi control as \\uXXXX and leaves other text alone', () => {
    expect(escapeTerminalText('a\u0000b\u0008c\u000Bd\u001Be\u007Ff\u0080g\u009Fh\u202Ai\u202Ej\u2066k\u2069l')).toBe('a\\u0000b\\u0008c\\u000Bd\\u001Be\\u007Ff\\u0080g\\u009Fh\\u202Ai\\u202Ej\\u2066k\\u2069l');
    expect(escapeTerminalText('line\r\nnext')).toBe('line\\u000D\nnext');
    expect(escapeTerminalText('tab\there\nCafé ✓ \u200B \u00A0 \u2065 \u202F')).toBe('tab\there\nCafé ✓ \u200B \u00A0 \u2065 \u202F');
  });
});

describe('the CLI prints a vault\'s control and bidi characters escaped', () => {
  const vault = makeVault('SpoofLore', { 'World/Harbor.md': BODY });

  it('in human output (search, show) and on stderr, naming the title and lines visibly', async () => {
    const search = await run(['search', '--lore', vault, 'harbor officer', '--index-dir', join(vault, '..', 'idx')]);
    expect([search.code, search.err]).toEqual([0, '']);
    expect(search.out.split('\n').slice(0, 4)).toEqual([
      expect.stringMatching(/^1\. SpoofLore:World\/Harbor\.md#chunk0 {2}\(score [0-9.]+\)$/),
      '   lines 1-3 · Harbor \\u202Eeciffo\\u001B[31m red',
      '   1 │ # Harbor \\u202Eeciffo\\u001B[31m red',
      '   3 │ The harbor officer\trings the \\u0007 bell \\u0085 at \\u2066dusk\\u2069.',
    ]);
    expect(search.out).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/u);
    const show = await run(['show', '--lore', vault, 'World/Harbor.md', '--index-dir', join(vault, '..', 'idx')]);
    expect(show.out).toContain('1 │ # Harbor \\u202Eeciffo\\u001B[31m red\n');
    const missing = await run(['show', '--lore', vault, 'World/\u202Emissing.md', '--index-dir', join(vault, '..', 'idx')]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain('World/\\u202Emissing.md');
    expect(missing.err).not.toMatch(/\u202E/u);
  });

  it('in --json output, as JSON escapes that parse back to the vault\'s exact text', async () => {
    const r = await run(['search', '--lore', vault, 'harbor officer', '--json', '--index-dir', join(vault, '..', 'idx')]);
    expect(r.code).toBe(0);
    expect(r.out).not.toMatch(/[\u0000-\u0008\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/u);
    expect(r.out).toContain('"Harbor \\u202Eeciffo\\u001b[31m red"');
    const hit = (JSON.parse(r.out) as { results: { heading_path: string[]; text: string }[] }).results[0]!;
    expect(hit.heading_path).toEqual([TITLE]);
    expect(hit.text).toBe(BODY.replace(/\r?\n$/, '').replace('\r', ''));
  });
});

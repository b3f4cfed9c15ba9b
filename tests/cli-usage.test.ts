/**
 * The CLI's shared surface (POLISH items 1–6): one definition of the vault options, one way to read an
 * input file, one format for usage errors, help texts, traverse --packet with --policy, search filters
 * that match nothing, and count wording. In-process through `main`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import { FIXTURES, FIXTURE_VAULT, REPO } from './helpers/shared.js';

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'lt-cli-usage-'));
  temps.push(d);
  return d;
};
const indexDir = tempDir();

async function run(argv: string[], cwd = REPO) {
  let stdout = '';
  let stderr = '';
  const code = await main(argv, { stdout: (t) => void (stdout += t), stderr: (t) => void (stderr += t), env: { LORETRACE_INDEX_DIR: indexDir }, cwd, isTTY: false });
  return { code, stdout, stderr };
}

/** Help text with commander's line wrapping undone (runs of whitespace → one space). */
async function help(command: string[]): Promise<string> {
  const r = await run([...command, '--help']);
  expect(r.code).toBe(0);
  return r.stdout.replace(/\s+/g, ' ');
}

const VAULT_COMMANDS = [['index'], ['search'], ['show'], ['links'], ['traverse'], ['retrieve'], ['verify-trace'], ['serve'], ['ledger', 'verify'], ['coverage']];

describe('addVaultOptions', () => {
  it('gives every vault-reading command the same --lore, --namespace, --index-dir, --config, --include and --exclude', async () => {
    for (const cmd of VAULT_COMMANDS) {
      const text = await help(cmd);
      for (const line of [
        '--lore <dir> vault directory (an Obsidian vault of markdown notes)',
        "--namespace <name> ref namespace (default: the config's namespace, else the vault folder name)",
        '--index-dir <dir> where the persisted index lives (default: $LORETRACE_INDEX_DIR, else the user cache)',
        '--config <file> vault config file (default: <vault>/loretrace.config.json when present)',
        '--include <glob> only notes whose vault path matches (repeatable; replaces config include, default **/*.md)',
        '--exclude <glob> leave out files whose vault path matches (repeatable; added to config exclude)',
      ]) {
        expect({ cmd: cmd.join(' '), has: text.includes(line) }).toEqual({ cmd: cmd.join(' '), has: true });
      }
    }
  });

  it('applies --namespace to verify-trace, which had no such option before', async () => {
    const r = await run(['verify-trace', '--lore', FIXTURE_VAULT, '--index-dir', tempDir(), '--namespace', 'Renamed', join(FIXTURES, 'artifacts', 'ledger.harbor.jsonl'), '--json']);
    expect(JSON.parse(r.stdout).namespace).toBe('Renamed');
  });

  it('requires --lore for every vault command but ledger verify', async () => {
    expect(await run(['verify-trace', 'x.json'])).toEqual({ code: 2, stdout: '', stderr: "loretrace: required option '--lore <dir>' not specified; see 'loretrace verify-trace --help' [usage]\n" });
    const r = await run(['ledger', 'verify', join(FIXTURES, 'artifacts', 'ledger.harbor.jsonl'), '--integrity-only']);
    expect(r.code).toBe(0);
  });
});

describe('readJsonFile', () => {
  it('reports a missing input file the same way for every command: file_not_found, exit 2', async () => {
    const dir = tempDir();
    const line = 'loretrace: cannot read nope.json: no such file [file_not_found]\n';
    for (const argv of [
      ['validate', 'packet', 'nope.json'],
      ['retrieve', '--lore', FIXTURE_VAULT, '--packet', 'nope.json', '--out', 'out.json'],
      ['traverse', '--lore', FIXTURE_VAULT, '--policy', 'nope.json'],
      ['traverse', '--lore', FIXTURE_VAULT, '--packet', 'nope.json'],
      ['verify-trace', '--lore', FIXTURE_VAULT, 'nope.json'],
      ['ledger', 'verify', 'nope.json'],
      ['ledger', 'export', 'nope.json', '--out', 'f.json'],
      ['serve', '--lore', FIXTURE_VAULT, '--packet', 'nope.json', '--ledger', 'l.jsonl', '--mcp'],
    ]) {
      expect({ argv, ...(await run(argv, dir)) }).toEqual({ argv, code: 2, stdout: '', stderr: line });
    }
  });

  it('reports a directory as one', async () => {
    const dir = tempDir();
    expect(await run(['traverse', '--lore', FIXTURE_VAULT, '--projected-context', '.', '--policy', join(FIXTURES, 'policies', 'world-tokens.policy.json')], dir)).toEqual({
      code: 2, stdout: '', stderr: 'loretrace: cannot read .: is a directory [file_not_found]\n',
    });
  });
});

describe('main (usage errors)', () => {
  it("prints commander's errors as one line pointing at the command's help, exit 2", async () => {
    const cases: [string[], string][] = [
      [['search', 'salt'], "required option '--lore <dir>' not specified; see 'loretrace search --help'"],
      [['search', 'salt', '--lore', FIXTURE_VAULT, '--clas', 'x'], "unknown option '--clas' (did you mean --class?); see 'loretrace search --help'"],
      [['search', 'salt', '--lore', FIXTURE_VAULT, '--k'], "option '--k <n>' argument missing; see 'loretrace search --help'"],
      [['show', '--lore', FIXTURE_VAULT], "missing required argument 'ref'; see 'loretrace show --help'"],
      [['links', 'a', 'b', '--lore', FIXTURE_VAULT], "too many arguments for 'links'. Expected 1 argument but got 2; see 'loretrace links --help'"],
      [['ledger', 'verify'], "missing required argument 'ledger'; see 'loretrace ledger verify --help'"],
      [['serach'], "unknown command 'serach' (did you mean search?); see 'loretrace --help'"],
    ];
    for (const [argv, what] of cases) {
      expect({ argv, ...(await run(argv)) }).toEqual({ argv, code: 2, stdout: '', stderr: `loretrace: ${what} [usage]\n` });
    }
  });

  it('points a bad option value at the command help too', async () => {
    expect(await run(['search', 'salt', '--lore', FIXTURE_VAULT, '--k', '0'])).toEqual({
      code: 2, stdout: '', stderr: "loretrace: option --k must be an integer ≥ 1 (got \"0\"); see 'loretrace search --help' [usage]\n",
    });
  });

  it('prints the help on stderr and exits 2 without a command or subcommand', async () => {
    const none = await run([]);
    expect([none.code, none.stdout, none.stderr.split('\n')[0]]).toEqual([2, '', 'Usage: loretrace [options] [command]']);
    const ledger = await run(['ledger']);
    expect([ledger.code, ledger.stdout, ledger.stderr.split('\n')[0]]).toEqual([2, '', 'Usage: loretrace ledger [options] [command]']);
  });

  it('exits 0 for an explicit --help', async () => {
    const r = await run(['--help']);
    expect([r.code, r.stdout.split('\n')[0], r.stderr]).toEqual([0, 'Usage: loretrace [options] [command]', '']);
  });
});

describe('help texts', () => {
  it('starts every command description lower-case', async () => {
    for (const cmd of [...VAULT_COMMANDS, ['validate'], ['ledger'], ['ledger', 'export']]) {
      const r = await run([...cmd, '--help']);
      const description = r.stdout.split('\n')[2] ?? '';
      expect({ cmd: cmd.join(' '), description: /^[a-z]/.test(description) }).toEqual({ cmd: cmd.join(' '), description: true });
    }
  });

  it('says that verify-trace reads raw .jsonl ledgers', async () => {
    expect(await help(['verify-trace'])).toContain('check every research_trace entry (capture, capture fragment, traverse result, ledger export or raw ledger .jsonl) line by line against the vault, and runner_captured entries against the ledger that served them');
  });
});

describe('loretrace traverse --packet with --policy', () => {
  const draft = join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json');
  const policy = join(FIXTURES, 'packets', 'brinefall-intake.policy.json');
  const projected = join(FIXTURES, 'packets', 'brinefall-intake.turn-01.mara-voss.projected-context.json');

  it("applies --policy to a draft without a traversal_policy and walks as retrieve does", async () => {
    const action = (JSON.parse(readFileSync(draft, 'utf8')) as { visible_context: { observed_event: { observable_action: string } } }).visible_context.observed_event.observable_action;
    const t = await run(['traverse', '--lore', FIXTURE_VAULT, '--packet', draft, '--policy', policy, '--projected-context', projected, '--query', action, '--json']);
    expect([t.code, t.stderr]).toEqual([0, '']);
    const result = JSON.parse(t.stdout) as { consulted_refs: string[]; followed_refs: string[]; policy_receipt: { disposition: string }[] };
    const out = tempDir();
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', draft, '--policy', policy, '--projected-context', projected, '--out', join(out, 'p.json'), '--capture-out', join(out, 'c.json')]);
    expect(r.code).toBe(0);
    const capture = JSON.parse(readFileSync(join(out, 'c.json'), 'utf8')) as { consulted_refs: string[]; followed_refs: string[] };
    expect(result.consulted_refs).toEqual(['FixtureLore:World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md']);
    expect(result.followed_refs).toEqual([
      'FixtureLore:World/Pre-Elysium/Factions/Powers/Major/Meridian Compact.md',
      'FixtureLore:World/Pre-Elysium/Factions/Movements/Quiet Hands.md',
      'FixtureLore:World/Pre-Elysium/Timeline/Events/Kestrel Route Accord.md',
    ]);
    expect([result.consulted_refs, result.followed_refs]).toEqual([capture.consulted_refs, capture.followed_refs]);
    // The draft's placeholder scope ("Packet-local excerpts only") is dropped as retrieve drops it: no advisory row.
    expect(result.policy_receipt.filter((row) => row.disposition === 'advisory')).toEqual([]);
  });

  it("keeps a packet's own traversal_policy over --policy and says so", async () => {
    const packet = join(FIXTURES, 'packets', 'proxy-fixture-research.packet.json');
    const other = join(FIXTURES, 'policies', 'world-tokens.policy.json');
    const r = await run(['traverse', '--lore', FIXTURE_VAULT, '--packet', packet, '--policy', other, '--receipt-only', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`loretrace: warning: ${packet} carries /lore_access/traversal_policy, which takes precedence; the policy given with --policy (${other}) was not used [policy_option_ignored]\n`);
    expect(JSON.parse(r.stdout).source).toBe(packet);
  });
});

describe('loretrace search (filters that match no note)', () => {
  it('names a --class or --prefix that no note has instead of a bare "No results"', async () => {
    expect(await run(['search', 'harbor', '--lore', FIXTURE_VAULT, '--class', 'harbour', '--prefix', 'World/Nowhere'])).toEqual({
      code: 0, stdout: 'No results for "harbor" in FixtureLore: no note under "World/Nowhere"; no note has class "harbour".\n', stderr: '',
    });
  });

  it('warns on stderr with --json, and when other filters still found results', async () => {
    const json = await run(['search', 'harbor', '--lore', FIXTURE_VAULT, '--class', 'harbour', '--json']);
    expect([json.code, JSON.parse(json.stdout).results, json.stderr]).toEqual([0, [], 'loretrace: warning: no note has class "harbour"\n']);
    const mixed = await run(['search', 'harbor', '--lore', FIXTURE_VAULT, '--prefix', 'FixtureLore:World/Politics', '--prefix', 'Nowhere/', '--k', '1']);
    expect([mixed.code, mixed.stdout.startsWith('1. FixtureLore:World/Politics/'), mixed.stderr]).toEqual([0, true, 'loretrace: warning: no note under "Nowhere/"\n']);
  });
});

describe('count wording', () => {
  it('ledger export says "1 trace entry, 1 consulted ref, 0 followed refs"', async () => {
    const out = join(tempDir(), 'f.json');
    const r = await run(['ledger', 'export', join(FIXTURES, 'artifacts', 'ledger.harbor.jsonl'), '--out', out]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^wrote .*f\.json: 1 trace entry, 1 consulted ref, 0 followed refs \(snapshot 1{64}; ledger head [0-9a-f]{64}\)\n$/);
  });

  it('ledger verify says "1 range"', async () => {
    const r = await run(['ledger', 'verify', join(FIXTURES, 'artifacts', 'ledger.harbor.jsonl'), '--lore', FIXTURE_VAULT]);
    expect(r.stdout).toContain('\n  lore re-check: 1 range, 1 matched, 0 mismatched, 0 missing, 1 in changed files\n');
  });

  it('verify-trace labels a raw .jsonl ledger proxy_ledger', async () => {
    const file = join(FIXTURES, 'artifacts', 'ledger.harbor.jsonl');
    const r = await run(['verify-trace', '--lore', FIXTURE_VAULT, file, '--integrity-only']);
    expect([r.code, r.stdout.split('\n')[0]]).toEqual([0, `verify-trace: ${file} (proxy_ledger) against FixtureLore snapshot 3e69bbc3a488`]);
  });

  it('verify-trace treats a one-record ledger (a single JSON line) as a ledger, not a document', async () => {
    const one = join(tempDir(), 'one.jsonl');
    writeFileSync(one, readFileSync(join(FIXTURES, 'artifacts', 'ledger.harbor.jsonl'), 'utf8').split('\n')[0] + '\n');
    const r = await run(['verify-trace', '--lore', FIXTURE_VAULT, one]);
    expect([r.code, r.stdout.split('\n')[0]]).toEqual([1, `verify-trace: ${one} (proxy_ledger) against FixtureLore snapshot 3e69bbc3a488`]);
  });
});

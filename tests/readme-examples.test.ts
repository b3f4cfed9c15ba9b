/**
 * The documented examples run: every fenced block marked `<!-- example -->` in README.md or docs/*.md is
 * executed with the built CLI and its output compared with the block, so an example cannot drift from
 * what loretrace prints. Whoever adds or changes a command marks its example the same way.
 *
 * Marking (on the line before the fence, blank lines allowed between):
 *
 *     <!-- example -->                      exit code 0 expected
 *     <!-- example exit=1 -->               another exit code (of the block's last command)
 *     <!-- example cwd=../shared/ghostlight -->   run in that folder (relative to the repository)
 *
 * In the block, each line starting with `$ ` is a command (bash; `loretrace` means the built CLI of this
 * checkout), and the lines up to the next `$ ` are its output: stdout and stderr as one stream, in write
 * order, as a terminal shows them (also when the command sends its stdout to a file). Every command but the
 * last must exit 0. Comparing:
 * - trailing whitespace is ignored (editors strip it);
 * - a line that is only `…` stands for any number of lines (zero included);
 * - `…` inside a line stands for any text (`snapshot 3e69bbc3…`, `(…/lore-fixtures/FixtureLore)`);
 * - `/tmp/` in commands and output is a fresh folder of each run (examples write to `/tmp/x` safely);
 * - the index lives in a fresh cache folder per block (`XDG_CACHE_HOME`, `LORETRACE_INDEX_DIR` unset).
 * A block whose commands or folder mention `../shared` is skipped, saying so, when the shared data is
 * absent. Needs `npm run build` (npm test builds first).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO, hasShared, sharedNotice } from './helpers/shared.js';

/** One marked example: where it stands, its options and its commands with their expected output. */
interface Example {
  file: string;
  line: number;
  exit: number;
  cwd: string;
  steps: { command: string; expected: string[] }[];
}

const MARKER = /^<!--\s*example((?:\s+[a-z]+=\S+)*)\s*-->\s*$/;

/** The marked examples of one markdown file, in file order. */
function examplesOf(file: string): Example[] {
  const lines = readFileSync(join(REPO, file), 'utf8').split('\n');
  const out: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i]!.trim());
    if (!m) continue;
    const options = Object.fromEntries([...(m[1] ?? '').matchAll(/([a-z]+)=(\S+)/g)].map((x) => [x[1]!, x[2]!]));
    let j = i + 1;
    while (j < lines.length && lines[j]!.trim() === '') j++;
    if (!/^```/.test(lines[j] ?? '')) throw new Error(`${file}:${i + 1}: an example marker must be followed by a fenced block`);
    const body: string[] = [];
    for (j += 1; j < lines.length && !/^```\s*$/.test(lines[j]!); j++) body.push(lines[j]!);
    const steps: Example['steps'] = [];
    for (const l of body) {
      if (l.startsWith('$ ')) steps.push({ command: l.slice(2), expected: [] });
      else if (steps.length === 0) throw new Error(`${file}:${i + 1}: an example block starts with a "$ " command line`);
      else steps[steps.length - 1]!.expected.push(l);
    }
    out.push({ file, line: i + 1, exit: Number(options.exit ?? 0), cwd: options.cwd ?? '.', steps });
  }
  return out;
}

/** Regular-expression source of one expected line: `…` is any text, everything else literal. */
function lineSource(expected: string): string {
  return expected.split('…').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('[^]*');
}

/**
 * True when the actual lines match the expected ones: line by line, a line that is only `…` matching any
 * number of lines (backtracking over the few lines an example has).
 */
function matches(expected: string[], actual: string[]): boolean {
  const res = expected.map((e) => (e.trim() === '…' ? null : new RegExp(`^${lineSource(e)}$`)));
  const memo = new Map<string, boolean>();
  const go = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const seen = memo.get(key);
    if (seen !== undefined) return seen;
    let ok: boolean;
    if (i === res.length) ok = j === actual.length;
    else if (res[i] === null) ok = go(i + 1, j) || (j < actual.length && go(i, j + 1));
    else ok = j < actual.length && res[i]!.test(actual[j]!) && go(i + 1, j + 1);
    memo.set(key, ok);
    return ok;
  };
  return go(0, 0);
}

const DOCS = ['README.md', ...readdirSync(join(REPO, 'docs')).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];
const EXAMPLES = DOCS.flatMap(examplesOf);
const BIN = join(REPO, 'bin', 'loretrace.js');
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

/** Run one command line of an example; `tmp` stands for `/tmp/` and the cache is the block's own. */
function runStep(command: string, cwd: string, tmp: string, cache: string): { code: number; lines: string[] } {
  // `/tmp/` of the example first, then the CLI's path: a checkout that itself lives under /tmp keeps its own path.
  const line = command.replaceAll('/tmp/', `${tmp}/`).replace(/(^|[\s;&|(])loretrace(?=\s)/g, `$1node ${JSON.stringify(BIN)}`);
  const env = { ...process.env, XDG_CACHE_HOME: cache, NO_COLOR: '1' } as NodeJS.ProcessEnv;
  delete env.LORETRACE_INDEX_DIR;
  // The group sends stderr to the same stream even when the command redirects its stdout to a file
  // (`serve --mcp … > answers.jsonl`), as a terminal shows it: the example must show those lines too.
  const r = spawnSync('bash', ['-c', `{ ${line}\n} 2>&1`], { cwd, env, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const text = (r.stdout ?? '').replaceAll(`${tmp}/`, '/tmp/').replaceAll(tmp, '/tmp');
  const lines = text.replace(/\n$/, '').split('\n').map((l) => l.trimEnd());
  return { code: r.status ?? 1, lines: text === '' ? [] : lines };
}

describe('documented examples', () => {
  it('finds the marked examples of README.md and docs/*.md', () => {
    expect(EXAMPLES.length).toBeGreaterThanOrEqual(8);
    expect(EXAMPLES.filter((e) => e.file === 'README.md').length).toBeGreaterThanOrEqual(8);
  });

  for (const ex of EXAMPLES) {
    const needsShared = ex.cwd.includes('../shared') || ex.steps.some((s) => s.command.includes('../shared'));
    const name = `${ex.file}:${ex.line} ${ex.steps.map((s) => s.command.split(' ').slice(0, 2).join(' ')).join(' && ')}${needsShared && !hasShared ? ` (skipped: ${sharedNotice})` : ''}`;
    it.skipIf(needsShared && !hasShared)(name, () => {
      const tmp = mkdtempSync(join(tmpdir(), 'lt-example-'));
      const cache = mkdtempSync(join(tmpdir(), 'lt-example-cache-'));
      temps.push(tmp, cache);
      const cwd = resolve(REPO, ex.cwd);
      expect(existsSync(cwd)).toBe(true);
      ex.steps.forEach((step, n) => {
        const r = runStep(step.command, cwd, tmp, cache);
        const last = n === ex.steps.length - 1;
        const expectedText = step.expected.map((l) => l.trimEnd()).join('\n');
        // On a mismatch, compare the whole texts so the failure shows a readable diff of the example.
        if (!matches(step.expected.map((l) => l.trimEnd()), r.lines)) expect(`$ ${step.command}\n${r.lines.join('\n')}`).toBe(`$ ${step.command}\n${expectedText}`);
        expect({ command: step.command, exit: r.code }).toEqual({ command: step.command, exit: last ? ex.exit : 0 });
      });
    });
  }
});

describe('the example matcher', () => {
  it('treats … as any text inside a line and as any number of lines on a line of its own', () => {
    expect(matches(['snapshot 3e69…', 'a'], ['snapshot 3e69bbc3a488', 'a'])).toBe(true);
    expect(matches(['x', '…', 'z'], ['x', 'z'])).toBe(true);
    expect(matches(['x', '…', 'z'], ['x', 'y1', 'y2', 'z'])).toBe(true);
    expect(matches(['x', '…', 'z'], ['x', 'y'])).toBe(false);
    expect(matches(['(a.b)'], ['(aXb)'])).toBe(false);
    expect(matches(['a'], ['a', 'b'])).toBe(false);
  });

  it('reads the marker options and the commands with their outputs', () => {
    const ex = examplesOf('README.md').find((e) => e.steps[0]!.command.startsWith('loretrace coverage'));
    expect(ex).toMatchObject({ exit: 1, cwd: '.' });
  });
});

describe("the README's Library API example", () => {
  it('gives the values its comments state: the first hit, 13 enforced receipt rows, a bare traverse result unbacked', async () => {
    const { indexVault, search, compilePolicy, traverse, verifyTrace } = await import('../src/index.js');
    const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
    // The comments this test checks are the README's own lines, so an edit of either shows here.
    expect(readme).toContain("// 'FixtureLore:World/Pre-Elysium/Factions/Movements/Open Ledger Society.md#chunk0'");
    expect(readme).toMatch(/compiled\.receipt\.length;\s+\/\/ 13 rows, all "enforced"/);
    expect(readme).toMatch(/report\.totals\.unbacked;\s+\/\/ 2: /);
    const dir = mkdtempSync(join(tmpdir(), 'lt-readme-api-'));
    temps.push(dir);
    const index = await indexVault(join(REPO, 'lore-fixtures/FixtureLore'), { indexDir: dir });
    expect(search(index, 'rescue ledger harbor', { k: 1 })[0]?.ref).toBe('FixtureLore:World/Pre-Elysium/Factions/Movements/Open Ledger Society.md#chunk0');
    const policy = JSON.parse(readFileSync(join(REPO, 'lore-fixtures/policies/world-tokens.policy.json'), 'utf8'));
    const compiled = compilePolicy(policy, { index });
    expect(compiled.receipt.map((r) => r.disposition)).toEqual(Array(13).fill('enforced'));
    const result = traverse(index, compiled, { queries: ['rescue ledger'] });
    expect(Object.keys(result)).toEqual(['schema_version', 'snapshot_id', 'policy_receipt', 'consulted_refs', 'followed_refs', 'source_excerpts', 'research_trace', 'decisions', 'stats']);
    const report = await verifyTrace(index, result);
    expect([report.totals.verified, report.totals.unbacked]).toEqual([0, 2]);
  });
});

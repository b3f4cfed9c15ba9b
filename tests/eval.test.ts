/**
 * The retrieval-quality harness (scripts/eval.mjs): its figures, its seeded split, its query set and an
 * end-to-end run on lore-fixtures. Harness correctness and determinism only — no quality thresholds
 * (those are what the eval reports) and no timings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AETHERIA, FIXTURE_VAULT, GHOSTLIGHT, REPO, hasShared } from './helpers/shared.js';
import { indexVault } from '../src/indexer/build.js';
import { resolveRef } from '../src/refs/ref.js';
import {
  DEV_PERCENT,
  FAMILIES,
  fnv1a,
  EVAL_RESULTS_VERSION,
  judge,
  noteSections,
  plainWords,
  requirementQueriesFrom,
  sectionQueries,
  slugOf,
  splitOf,
  summarize,
  walkFigures,
} from '../scripts/eval/index.mjs';

const at = (path: string, line_start: number, line_end: number) => ({ path, line_start, line_end });

const tempDirs: string[] = [];
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const d of tempDirs) await rm(d, { recursive: true, force: true });
});

describe('judge', () => {
  it('counts the right note, overlapping lines and the rank of the first overlap', () => {
    const targets = [at('a.md', 10, 12)];
    expect(judge([at('a.md', 1, 9), at('b.md', 10, 12), at('a.md', 12, 20)], targets)).toEqual({
      hit1: true, overlap1: false, overlap3: true, rank: 3, lines1: 9,
    });
    expect(judge([at('a.md', 11, 11)], targets)).toEqual({ hit1: true, overlap1: true, overlap3: true, rank: 1, lines1: 1 });
    expect(judge([], targets)).toEqual({ hit1: false, overlap1: false, overlap3: false, rank: null, lines1: 0 });
  });

  it('accepts any of several targets', () => {
    expect(judge([at('b.md', 3, 4)], [at('a.md', 1, 2), at('b.md', 4, 9)]).overlap1).toBe(true);
  });
});

describe('summarize', () => {
  it('averages each figure and gives MRR from the ranks', () => {
    const f = summarize([
      { hit1: true, overlap1: true, overlap3: true, rank: 1, lines1: 4 },
      { hit1: true, overlap1: false, overlap3: true, rank: 2, lines1: 6 },
      { hit1: false, overlap1: false, overlap3: false, rank: null, lines1: 2 },
    ]);
    expect(f).toEqual({ n: 3, 'hit@1': 0.6667, 'overlap@1': 0.3333, 'overlap@3': 0.6667, mrr: 0.5, 'lines@1': 4 });
    expect(summarize([])).toEqual({ n: 0, 'hit@1': null, 'overlap@1': null, 'overlap@3': null, mrr: null, 'lines@1': null });
  });
});

describe('walkFigures', () => {
  it('gives recall over the cited notes and precision over the notes the walk added', () => {
    expect(walkFigures(['s.md', 'a.md', 'x.md', 'y.md'], ['s.md'], ['s.md', 'a.md', 'b.md', 'c.md'])).toEqual({
      refs: 4, recall: 0.5, added: 3, added_cited: 1, precision_added: 0.3333,
    });
    expect(walkFigures(['s.md'], ['s.md'], ['s.md']).precision_added).toBeNull();
  });
});

describe('splitOf', () => {
  it('depends on the id and the seed only: FNV-1a of "<seed>:<id>" mod 100 below DEV_PERCENT is dev', () => {
    // FNV-1a (32-bit, over UTF-16 code units) written here with BigInt arithmetic, independently of
    // scripts/eval/split.mjs's Math.imul version.
    const fnv = (s: string): bigint => {
      let h = 0x811c9dc5n;
      for (let i = 0; i < s.length; i++) h = ((h ^ BigInt(s.charCodeAt(i))) * 0x01000193n) % 0x1_0000_0000n;
      return h;
    };
    // FNV-1a 32-bit reference vectors (the FNV authors' test suite).
    expect([fnv(''), fnv('a'), fnv('foobar')]).toEqual([0x811c9dc5n, 0xe40c292cn, 0xbf9cf968n]);
    expect([fnv1a(''), fnv1a('a'), fnv1a('foobar')]).toEqual([0x811c9dc5, 0xe40c292c, 0xbf9cf968]);
    const expected = (id: string, seed: number): string => (fnv(`${seed}:${id}`) % 100n < BigInt(DEV_PERCENT) ? 'dev' : 'held_out');
    for (const id of ['section:x.md#A@L3', 'name:Aya Collective', 'q0', 'q999', 'requirement:Ganymede — Lightsail']) {
      for (const seed of [16, 17]) expect(splitOf(id, seed), `${id} @ ${seed}`).toBe(expected(id, seed));
    }
    const ids = Array.from({ length: 1000 }, (_, i) => `q${i}`);
    const dev = ids.filter((id) => splitOf(id, 16) === 'dev').length;
    expect(dev).toBeGreaterThan(DEV_PERCENT * 10 - 60);
    expect(dev).toBeLessThan(DEV_PERCENT * 10 + 60);
    expect(ids.filter((id) => splitOf(id, 16) !== expected(id, 16))).toEqual([]);
    expect(ids.filter((id) => splitOf(id, 16) !== splitOf(id, 17)).length).toBeGreaterThan(0);
  });

  it('puts every committed query where its id puts it, so a case added later moves no existing one', async () => {
    for (const vault of ['fixture', 'aetheria']) {
      const set = JSON.parse(await readFile(join(REPO, 'eval', 'sets', `${vault}.json`), 'utf8')) as { seed: number; queries: { id: string; split: string }[] };
      const moved = set.queries.filter((q) => q.split !== splitOf(q.id, set.seed)).map((q) => q.id);
      expect({ vault, moved }).toEqual({ vault, moved: [] });
    }
  });
});

describe('query set on lore-fixtures', () => {
  it('reads wikilinks by their display text', () => {
    expect(plainWords('Follow [[Quiet Hands#^oath|the oath]] and [[Meridian Compact]]; ![[Map.png]] [law](x.md).')).toEqual([
      'Follow', 'the', 'oath', 'and', 'Meridian', 'Compact', 'law',
    ]);
    expect(slugOf('Lucent Media')).toBe('lucent-media');
  });

  it('builds section queries from a heading section of the note they name, mixed ones from two sections', async () => {
    const index = await indexVault(FIXTURE_VAULT, { indexDir: await tempDir('lt-eval-set-') });
    const sections = noteSections(index).flat();
    const queries = sectionQueries(index, { seed: 16, limit: 1000 });
    expect(queries.length).toBeGreaterThan(0);
    expect(new Set(queries.map((q) => q.id)).size).toBe(queries.length);
    for (const q of queries) {
      const s = sections.find((x) => x.path === q.targets[0]!.path && x.line_start === q.targets[0]!.line_start)!;
      expect(q.targets).toEqual([at(s.path, s.line_start, s.line_end)]);
      expect(q.query!.startsWith(s.title + ' ')).toBe(true);
      const words = q.query!.slice(s.title.length + 1).split(' ');
      const own = words.filter((w) => plainWords(s.text).includes(w));
      expect(own.length).toBe(q.family === 'section' ? 4 : 3);
    }
    expect(queries.map((q) => q.family).filter((f) => f === 'section_mixed').length).toBeGreaterThan(0);
    expect(sectionQueries(index, { seed: 16, limit: 1000 })).toEqual(queries);
  });

  it('resolves the committed requirement pairs to the cited lines', async () => {
    const index = await indexVault(FIXTURE_VAULT, { indexDir: await tempDir('lt-eval-req-') });
    const doc = JSON.parse(await readFile(join(REPO, 'lore-fixtures', 'eval', 'requirements.json'), 'utf8'));
    const pairs = requirementQueriesFrom({ resolveRef }, index, doc, 16);
    expect(pairs[0]).toMatchObject({
      id: 'requirement:brinefall-intake.lore.blackout',
      family: 'requirement',
      targets: [at('World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md', 9, 13)],
    });
    expect(pairs[1]!.targets).toEqual([
      at('World/Pre-Elysium/Factions/Movements/Quiet Hands.md', 5, 7),
      at('World/Pre-Elysium/Factions/Movements/Quiet Hands.md', 9, 12),
    ]);
  });
});

describe('npm run eval on lore-fixtures', () => {
  let out = '';
  let first: ReturnType<typeof spawnSync>;
  let second: ReturnType<typeof spawnSync>;
  let check: ReturnType<typeof spawnSync>;
  const run = (dir: string, ...extra: string[]) =>
    spawnSync(process.execPath, ['scripts/eval.mjs', '--vault', 'fixture', '--out', dir, '--quiet', ...extra], { cwd: REPO, encoding: 'utf8', timeout: 110_000 });
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'loretrace-eval-e2e-'));
    first = run(join(out, 'a'));
    second = run(join(out, 'b'));
    check = run(join(out, 'a'), '--check');
  }, 120_000);
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('exits 2 with the usage on a bad --vault (argument parsing shared with the bench: scripts/cli-args.mjs)', () => {
    const bad = spawnSync(process.execPath, ['scripts/eval.mjs', '--vault', 'x'], { cwd: REPO, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr.split('\n').slice(0, 2)).toEqual([
      "eval: option '--vault <v>' argument 'x' is invalid. must be fixture, aetheria or all",
      'Usage: node scripts/eval.mjs [options]',
    ]);
  });

  it('runs and exits 0 without output on stderr', () => {
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
  });

  it('writes byte-identical results, summary and set on a second run, and --check agrees', async () => {
    for (const f of ['results/fixture.json', 'results/fixture.md', 'sets/fixture.json']) {
      expect(existsSync(join(out, 'a', f))).toBe(true);
      expect(await readFile(join(out, 'b', f), 'utf8')).toBe(await readFile(join(out, 'a', f), 'utf8'));
    }
    expect(check.status).toBe(0);
    // Even with --quiet, --check says what it found: one line on stdout when the output is current.
    expect([check.stdout, check.stderr]).toEqual([`eval --check: ${join(out, 'a')} is current (3 files identical to this run: fixture)\n`, '']);
  });

  it('--check exits 1 when a file in --out differs from the run, even by one byte', async () => {
    const file = join(out, 'b', 'results', 'fixture.md');
    await writeFile(file, (await readFile(file, 'utf8')) + ' ');
    const stale = run(join(out, 'b'), '--check');
    expect(stale.status).toBe(1);
    expect(stale.stdout).toBe('');
    expect(stale.stderr).toBe(`eval --check: 1 of 3 files differ from this run (listed above without --quiet); run it without --check to rewrite ${join(out, 'b')}\n`);
  });

  it('reports every family, part and ranker, and traversal recall and precision per case', async () => {
    const results = JSON.parse(await readFile(join(out, 'a', 'results', 'fixture.json'), 'utf8'));
    expect(results.schema_version).toBe(EVAL_RESULTS_VERSION);
    expect(results.vault).toMatchObject({ id: 'fixture', namespace: 'FixtureLore' });
    expect(results.rankers).toEqual(['loretrace', 'plain_bm25', 'whole_note_bm25']);
    expect(Object.keys(results.search)).toEqual([...FAMILIES, 'all']);
    const set = JSON.parse(await readFile(join(out, 'a', 'sets', 'fixture.json'), 'utf8'));
    for (const family of FAMILIES) {
      const inFamily = set.queries.filter((q: { family: string }) => q.family === family);
      expect(inFamily.length).toBeGreaterThan(0);
      for (const part of ['dev', 'held_out'] as const) {
        const n = inFamily.filter((q: { split: string }) => q.split === part).length;
        for (const r of results.rankers) expect(results.search[family][part][r].n).toBe(n);
      }
    }
    expect(results.search.all.all.loretrace.n).toBe(set.queries.length);
    expect(results.per_query.map((q: { id: string }) => q.id)).toEqual(set.queries.map((q: { id: string }) => q.id));
    expect(results.traversal.cases.map((c: { id: string }) => c.id)).toEqual(['traversal:brinefall-intake', 'traversal:salvage-dispute']);
    const brinefall = results.traversal.cases[0];
    expect(brinefall.seeds).toEqual(['World/Pre-Elysium/Timeline/Events/Brinefall Blackout.md']);
    expect(brinefall.consulted).toEqual(brinefall.seeds);
    const walked = new Set([...brinefall.consulted, ...brinefall.followed]);
    expect(brinefall.recall).toBe(Math.round((brinefall.cited.filter((p: string) => walked.has(p)).length / brinefall.cited.length) * 1e4) / 1e4);
  });
});

/**
 * The committed eval/results and eval/sets against a fresh run of this build (dist/: run `npm run build`
 * first). `--check` compares the run with the files under `--out`, and the run reads its "before" from
 * `<out>/baseline/<vault>.json`, so the run writes to a temporary folder holding a copy of the committed
 * baseline, and each file is compared byte for byte with the committed one — a stale committed figure fails
 * here, with the difference shown.
 */
async function committedEvalDiffers(vault: 'fixture' | 'aetheria'): Promise<void> {
  const out = await mkdtemp(join(tmpdir(), `loretrace-eval-committed-${vault}-`));
  try {
    await mkdir(join(out, 'baseline'));
    const baseline = join(REPO, 'eval', 'baseline', `${vault}.json`);
    if (existsSync(baseline)) await copyFile(baseline, join(out, 'baseline', `${vault}.json`));
    const r = spawnSync(process.execPath, ['scripts/eval.mjs', '--vault', vault, '--out', out, '--quiet'], { cwd: REPO, encoding: 'utf8', timeout: 280_000 });
    expect([r.status, r.stderr]).toEqual([0, '']);
    for (const f of [`results/${vault}.json`, `results/${vault}.md`, `sets/${vault}.json`]) {
      expect({ file: `eval/${f}`, text: await readFile(join(out, f), 'utf8') }).toEqual({ file: `eval/${f}`, text: await readFile(join(REPO, 'eval', f), 'utf8') });
    }
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

describe('the committed eval results are current', () => {
  it('eval/results/fixture.* and eval/sets/fixture.json are what this build writes', async () => {
    await committedEvalDiffers('fixture');
  }, 120_000);

  it.skipIf(!hasShared)(
    hasShared
      ? 'eval/results/aetheria.* and eval/sets/aetheria.json are what this build writes (real vault, 1–2 minutes)'
      : `eval/results/aetheria.* is not checked: the real vault or the Ghostlight files are missing (${AETHERIA}, ${GHOSTLIGHT}; set LORETRACE_SHARED)`,
    async () => {
      await committedEvalDiffers('aetheria');
    },
    300_000,
  );
});

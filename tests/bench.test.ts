/**
 * The benchmark harness (scripts/bench.mjs): its deterministic inputs, its statistics and an
 * end-to-end run at ×1 on lore-fixtures. Harness correctness only — timings are never asserted here.
 */
import { describe, expect, it, beforeAll, afterAll } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { FIXTURE_VAULT, REPO } from './helpers/shared.js';
import {
  PHASES,
  PHASE_IDS,
  RATIO_IDS,
  buildScaledVault,
  compareTop5,
  computeRatios,
  computeScaleChecks,
  copyName,
  denominatorTerms,
  editFiles,
  generateQueries,
  knownItemRate,
  headingChunks,
  listFiles,
  makeProcessor,
  median,
  mergeResults,
  withLaterPhases,
  NOT_IN_RUN,
  NOT_REACHED,
  mulberry32,
  percentile,
  ratio,
  renderGrowth,
  renderGrowthSvg,
  restoreFiles,
  sampleIndices,
  SCHEMA_FILE,
  validateResults,
} from '../scripts/bench/index.mjs';

describe('mulberry32', () => {
  it('yields the same sequence for the same seed', () => {
    const r = mulberry32(7);
    expect([r(), r(), r()]).toEqual([0.011704753153026104, 0.06195825757458806, 0.97690763277933]);
  });

  it('drives sampleIndices to distinct, repeatable picks', () => {
    expect(sampleIndices(mulberry32(1), 10, 4)).toEqual([6, 1, 0, 9]);
    expect(sampleIndices(mulberry32(1), 3, 10).sort()).toEqual([0, 1, 2]);
  });
});

describe('percentile', () => {
  it('uses the nearest rank, so p99 of 200 samples is the 198th smallest', () => {
    const xs = Array.from({ length: 200 }, (_, i) => 200 - i);
    expect(percentile(xs, 99)).toBe(198);
    expect(percentile(xs, 50)).toBe(100);
    expect(percentile([5], 99)).toBe(5);
    expect(percentile([], 50)).toBeNull();
  });

  it('rejects p outside (0, 100]', () => {
    expect(() => percentile([1], 0)).toThrow('bench: percentile p must be in (0, 100] (got 0)');
  });
});

describe('median', () => {
  it('averages the two middle samples of an even count', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([])).toBeNull();
  });
});

describe('ratio', () => {
  it('is null when a side is missing or the denominator is not positive', () => {
    expect(ratio(3, 4)).toBe(0.75);
    expect(ratio(null, 4)).toBeNull();
    expect(ratio(3, 0)).toBeNull();
  });
});

describe('generateQueries', () => {
  const sentences = [['alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta', 'eta']];

  it('picks 2–6 consecutive words with the seeded PRNG, identically on every call', () => {
    expect(generateQueries(sentences, 3, 42)).toEqual(['delta epsilon zeta eta', 'delta epsilon', 'gamma delta epsilon zeta eta']);
    expect(generateQueries(sentences, 3, 42)).toEqual(generateQueries(sentences, 3, 42));
  });

  it('repeats earlier queries in order when the vault cannot give enough distinct ones', () => {
    const qs = generateQueries([['one', 'two']], 3, 1);
    expect(qs).toEqual(['one two', 'one two', 'one two']);
  });

  it('refuses a vault without prose', () => {
    expect(() => generateQueries([], 5, 1)).toThrow('bench: the source vault has no prose sentences to build queries from');
  });
});

describe('knownItemRate', () => {
  it('counts a query found when a top-k hit of any copy overlaps its source paragraph', () => {
    const sources = [
      { path: 'A/n.md', line_start: 4, line_end: 6 },
      { path: 'A/n.md', line_start: 10, line_end: 10 },
      null,
    ];
    const tops = [
      [{ path: 'c003/A/n.md', line_start: 6, line_end: 9 }],
      [{ path: 'c000/A/n.md', line_start: 1, line_end: 9 }, { path: 'c000/A/m.md', line_start: 10, line_end: 12 }],
      [{ path: 'c000/A/n.md', line_start: 1, line_end: 99 }],
    ];
    expect(knownItemRate(sources, tops)).toBe(0.5);
    expect(knownItemRate([null], tops)).toBeNull();
  });
});

describe('headingChunks', () => {
  it('splits at top-level headings after the frontmatter with exact line ranges', () => {
    const text = '---\ntitle: X\n---\nIntro line.\n\n# A\nalpha\n\n## B\nbeta\n\n';
    const chunks = headingChunks('n.md', text, makeProcessor().parse(text));
    expect(chunks.map((c) => [c.id, c.line_start, c.line_end, c.text])).toEqual([
      ['n.md#chunk0', 4, 4, 'Intro line.'],
      ['n.md#chunk1', 6, 7, '# A\nalpha'],
      ['n.md#chunk2', 9, 10, '## B\nbeta'],
    ]);
  });
});

describe('compareTop5', () => {
  it('counts set drift, order drift and overlap against the plain top-5', () => {
    const q = compareTop5(
      [['a', 'b'], ['b', 'a'], ['x', 'y']],
      [['a', 'b'], ['a', 'b'], ['x', 'z']],
    );
    expect(q).toEqual({ queries_compared: 3, top5_set_drift: 1 / 3, top5_order_drift: 2 / 3, mean_top5_overlap: (1 + 1 + 0.5) / 3 });
  });

  it('reports nothing when a side is missing', () => {
    expect(compareTop5(null, [['a']])).toEqual({ queries_compared: 0, top5_set_drift: null, top5_order_drift: null, mean_top5_overlap: null });
  });
});

describe('buildScaledVault', () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'loretrace-bench-test-'));
    await mkdir(join(dir, 'Src', 'World', '.obsidian'), { recursive: true });
    await writeFile(join(dir, 'Src', 'Root.md'), '# Root\nSee [[Deep]].\n');
    await writeFile(join(dir, 'Src', 'World', 'Deep.md'), 'Deep text.\r\n');
    await writeFile(join(dir, 'Src', 'World', 'map.png'), Buffer.from([1, 2, 3]));
    await writeFile(join(dir, 'Src', 'World', '.obsidian', 'app.json'), '{}');
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('copies every file into c000…c00N subfolders of a folder named after the source, skipping dot-folders', async () => {
    const v = await buildScaledVault(join(dir, 'Src'), join(dir, 'out'), 3);
    expect(v).toEqual({ root: join(dir, 'out', 'Src'), namespace: 'Src', files: 9, notes: 6, bytes: 3 * (21 + 12 + 3), note_bytes: 3 * 33 });
    expect(await listFiles(v.root)).toEqual([0, 1, 2].flatMap((i) => [`${copyName(i)}/Root.md`, `${copyName(i)}/World/Deep.md`]));
    expect(await readFile(join(v.root, 'c002', 'World', 'Deep.md'), 'utf8')).toBe('Deep text.\r\n');
  });

  it('edits files deterministically per run and restores the originals', async () => {
    const v = await buildScaledVault(join(dir, 'Src'), join(dir, 'edit'), 1);
    const file = join(v.root, 'c000', 'Root.md');
    const originals = await editFiles(v.root, ['c000/Root.md'], 2);
    expect(await readFile(file, 'utf8')).toBe('# Root\nSee [[Deep]].\n\n\nBench edit 2: the archive keeper notes a quiet change in Root.md.\n');
    await restoreFiles(v.root, originals);
    expect(await readFile(file, 'utf8')).toBe('# Root\nSee [[Deep]].\n');
  });

  it('refuses a scale below 1', async () => {
    await expect(buildScaledVault(join(dir, 'Src'), join(dir, 'bad'), 0)).rejects.toThrow('bench: scale must be an integer ≥ 1 (got 0)');
  });
});

describe('computeRatios', () => {
  const ok = (fields: Record<string, number>) => ({ status: 'ok', ...fields });
  const phases: Record<string, unknown> = {
    proxy_lore_read: ok({ p50_ms: 3 }),
    proxy_floor: ok({ p50_ms: 0.5 }),
    http_floor: ok({ p50_ms: 1.5 }),
    proxy_stdio_lore_read: ok({ p50_ms: 2 }),
    mcp_filesystem_read: { status: 'skipped', p50_ms: null },
  };

  it('sums a denominator of several terms (lore_read over HTTP vs the read-and-fsync floor plus a bare round trip)', () => {
    const r = computeRatios(phases).http_lore_read_p50_vs_floor_plus_http;
    expect(r).toEqual({ numerator: 'proxy_lore_read.p50_ms', denominator: 'proxy_floor.p50_ms + http_floor.p50_ms', value: 1.5, target: 1.5, met: true });
    expect(denominatorTerms({ den: ['a', 'p50_ms'] })).toEqual([['a', 'p50_ms']]);
  });

  it('gives null, not a number, when a side did not run ok', () => {
    expect(computeRatios(phases).stdio_lore_read_p50_vs_filesystem_server).toMatchObject({ value: null, met: null, target: 1 });
    expect(computeRatios({ ...phases, http_floor: { status: 'failed' } }).http_lore_read_p50_vs_floor_plus_http?.value).toBeNull();
  });
});

describe('computeScaleChecks', () => {
  const scale = (n: number, p99: number, rss: number) => ({
    scale: n,
    phases: { search: { status: 'ok', p99_ms: p99 }, cold_index: { status: 'ok', peak_rss_bytes: rss } },
  });

  it('checks search p99 at ×1000 against 3 × ×100 and the cold peak RSS at ×1000 against 3 GiB', () => {
    const checks = computeScaleChecks([scale(100, 10, 5e8), scale(1000, 40, 2 ** 31)]);
    expect(checks.map((c) => [c.id, c.value, c.target, c.met])).toEqual([
      ['search_p99_x1000_vs_x100', 4, 3, false],
      ['cold_peak_rss_x1000_bytes', 2 ** 31, 3 * 2 ** 30, true],
    ]);
  });

  it('leaves a check open (null) when its scales did not run', () => {
    expect(computeScaleChecks([scale(100, 10, 5e8)]).map((c) => [c.value, c.met])).toEqual([[null, null], [null, null]]);
  });
});

describe('bench-results schema', () => {
  it('requires every phase and every ratio the harness defines', async () => {
    const schema = JSON.parse(await readFile(SCHEMA_FILE, 'utf8'));
    const scale = schema.properties.scales.items.properties;
    expect(scale.phases.required).toEqual(PHASE_IDS);
    expect(scale.ratios.required).toEqual(RATIO_IDS);
  });

  it('rejects a result that drops a phase', async () => {
    const errors = await validateResults({ schema_version: '1' });
    expect(errors).toContain("/: must have required property 'scales' {\"missingProperty\":\"scales\"}");
  });
});

/** Export names each loretrace phase needs from dist/index.js. */
const NEEDS: Record<string, string[]> = {
  cold_index: ['indexVault'],
  warm_start: ['indexVault', 'search'],
  search: ['indexVault', 'search'],
  traversal: ['indexVault', 'compilePolicy', 'traverse'],
  proxy_lore_search: ['indexVault', 'openProxySession', 'startHttpServer'],
  proxy_lore_read: ['indexVault', 'openProxySession', 'startHttpServer'],
  http_floor: ['indexVault', 'openProxySession', 'startHttpServer'],
  proxy_stdio_lore_read: ['indexVault', 'openProxySession', 'serveMcpStdio'],
  incremental_1_file: ['indexVault'],
  incremental_1_percent: ['indexVault'],
  retrieve_batch: ['retrieveBatch'],
  retrieve_single_runs: ['retrieveBatch'],
};

describe('npm run bench', () => {
  let out = '';
  let run: ReturnType<typeof spawnSync>;
  let api: Record<string, unknown> = {};
  beforeAll(async () => {
    out = await mkdtemp(join(tmpdir(), 'loretrace-bench-e2e-'));
    const args = ['scripts/bench.mjs', '--scale', '1', '--runs', '1', '--source', FIXTURE_VAULT, '--out', out];
    args.push('--queries', '20', '--traversal-iterations', '3', '--proxy-calls', '5', '--batch-drafts', '1', '--quiet');
    run = spawnSync(process.execPath, args, { cwd: REPO, encoding: 'utf8', timeout: 150_000 });
    const dist = join(REPO, 'dist', 'index.js');
    if (existsSync(dist)) api = await import(pathToFileURL(dist).href);
  }, 160_000);
  afterAll(async () => {
    await rm(out, { recursive: true, force: true });
  });

  it('runs end to end at ×1 on lore-fixtures and exits 0', () => {
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
  });

  it('writes bench-results.json that validates against the schema with every phase and ratio', async () => {
    const results = JSON.parse(await readFile(join(out, 'bench-results.json'), 'utf8'));
    expect(await validateResults(results)).toEqual([]);
    expect(results.scales.map((s: { scale: number }) => s.scale)).toEqual([1]);
    expect(Object.keys(results.scales[0].phases)).toEqual(PHASE_IDS);
    expect(Object.keys(results.scales[0].ratios)).toEqual(RATIO_IDS);
    expect(results.queries.count).toBe(20);
  });

  it('runs every anchor, and every loretrace phase whose API dist/index.js exports', async () => {
    const results = JSON.parse(await readFile(join(out, 'bench-results.json'), 'utf8'));
    const phases = results.scales[0].phases;
    for (const def of PHASES) {
      const needs = NEEDS[def.id] ?? [];
      const live = needs.every((n) => typeof api[n] === 'function');
      if (live) expect({ id: def.id, status: phases[def.id].status, reason: phases[def.id].reason }).toEqual({ id: def.id, status: 'ok', reason: null });
      else expect({ id: def.id, status: phases[def.id].status }).toEqual({ id: def.id, status: 'unavailable' });
    }
  });

  it('measures the peers pinned in package.json on the same chunks and notes, with their quality figures', async () => {
    const results = JSON.parse(await readFile(join(out, 'bench-results.json'), 'utf8'));
    const pkg = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8'));
    expect(results.peers).toEqual({
      flexsearch: pkg.devDependencies.flexsearch,
      mcp_filesystem_server: pkg.devDependencies['@modelcontextprotocol/server-filesystem'],
      minisearch: pkg.dependencies.minisearch,
    });
    const s = results.scales[0];
    expect(PHASES.filter((d) => d.kind === 'peer').map((d) => d.id)).toEqual(['flexsearch_default_search', 'flexsearch_match_search', 'mcp_filesystem_read']);
    for (const id of ['flexsearch_default_search', 'flexsearch_match_search']) {
      expect(s.phases[id].extra.chunks).toBe(s.phases.search.extra.chunks);
      expect(s.phases[id].extra.limit).toBe(5);
    }
    expect(s.phases.flexsearch_match_search.extra.profile).toEqual({ field: 'text', preset: 'match' });
    for (const k of ['flexsearch_default_known_item_at_5', 'flexsearch_default_name_lookup_at_5', 'flexsearch_match_known_item_at_5', 'flexsearch_match_name_lookup_at_5']) {
      expect(s.quality[k]).toBeGreaterThanOrEqual(0);
      expect(s.quality[k]).toBeLessThanOrEqual(1);
    }
    // The same MCP client and transport for both servers; the filesystem server reads the notes lore_read's ranges are in.
    expect(s.phases.proxy_stdio_lore_read.extra).toMatchObject({ transport: 'stdio', tool: 'lore_read', calls: 5 });
    expect(s.phases.mcp_filesystem_read.extra).toMatchObject({ transport: 'stdio', tool: 'read_text_file', calls: 5, refused_in_warmup: 0 });
    expect(s.phases.mcp_filesystem_read.extra.items).toBe(s.phases.proxy_stdio_lore_read.extra.items);
    // The bare HTTP floor served loretrace's own lore_read responses, one per admitted range.
    expect(s.phases.http_floor.extra.bodies).toBe(s.phases.proxy_lore_read.extra.ranges);
    expect(s.ratios.http_lore_read_p50_vs_floor_plus_http.denominator).toBe('proxy_floor.p50_ms + http_floor.p50_ms');
    expect(results.scale_checks.map((c: { id: string; value: unknown }) => [c.id, c.value])).toEqual([['search_p99_x1000_vs_x100', null], ['cold_peak_rss_x1000_bytes', null]]);
  });

  it('measures retrieve --batch against one CLI run per draft on the same corpus, and both write the same bytes', async () => {
    const results = JSON.parse(await readFile(join(out, 'bench-results.json'), 'utf8'));
    const s = results.scales[0];
    expect(s.phases.retrieve_batch.extra).toMatchObject({ drafts: 1, concurrency: 4, ok: 1, failed: 0, index_loads: 1 });
    // Per coordinator draft: packet, ledger, capture fragment, lock — identical whichever way they were written.
    expect(s.phases.retrieve_single_runs.extra).toMatchObject({ drafts: 1, failed: 0, index_loads: 1, files_compared: 4, identical_outputs: true, differing_files: [] });
    expect(s.ratios.retrieve_batch_vs_single_runs).toMatchObject({ numerator: 'retrieve_batch.median_ms', denominator: 'retrieve_single_runs.median_ms', target: 0.1 });
  });

  it('writes the growth plot, and renders growth tables and lines once two scales are in the results', async () => {
    const results = JSON.parse(await readFile(join(out, 'bench-results.json'), 'utf8'));
    const svg = await readFile(join(out, 'bench-growth.svg'), 'utf8');
    expect(svg).toBe(renderGrowthSvg(results));
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    const two = { ...results, scales: [results.scales[0], { ...results.scales[0], scale: 10 }] };
    const plot = renderGrowthSvg(two);
    expect(plot).toContain('<polyline');
    expect(plot).toContain('cold_index (loretrace)');
    expect(plot).toBe(renderGrowthSvg(two));
    const lines = renderGrowth(two);
    expect(lines).toContain('## Growth ×1 → ×10 (plot: bench-growth.svg)');
    expect(lines.filter((l) => l.startsWith('| cold_index | median |'))).toHaveLength(1);
  });

  it('merges runs for the growth curve: a later run\'s scale replaces an earlier one\'s, checks recomputed (--merge)', async () => {
    const file = join(out, 'bench-results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    const big = { ...results, scales: [{ ...results.scales[0], scale: 1000 }] };
    const bigFile = join(out, 'big.json');
    await writeFile(bigFile, JSON.stringify(big));
    const merged = mergeResults([{ file, results }, { file: bigFile, results: big }]);
    expect(merged.scales.map((s) => [s.scale, s.source_file])).toEqual([[1, file], [1000, bigFile]]);
    expect(merged.scale_checks.map((c) => c.id)).toEqual(['search_p99_x1000_vs_x100', 'cold_peak_rss_x1000_bytes']);
    expect(merged.scale_checks[1]!.value).toBe(results.scales[0].phases.cold_index.peak_rss_bytes);
    const dir = join(out, 'merged');
    const cli = spawnSync(process.execPath, ['scripts/bench.mjs', '--merge', `${file},${bigFile}`, '--out', dir, '--quiet'], { cwd: REPO, encoding: 'utf8' });
    expect([cli.status, cli.stderr]).toEqual([0, '']);
    const md = await readFile(join(dir, 'bench-growth.md'), 'utf8');
    expect(md).toContain('## Growth ×1 → ×1000 (plot: bench-growth.svg)');
    expect(await readFile(join(dir, 'bench-growth.svg'), 'utf8')).toContain('growth over ×1, ×1000');
  });

  it("merges a stopped run's bench-progress.json as its scale, with the phases it reached, and an older run missing later phases", async () => {
    const file = join(out, 'bench-results.json');
    const results = JSON.parse(await readFile(file, 'utf8'));
    const s = results.scales[0];
    const reached = { ...s.phases, traversal: { ...s.phases.traversal, status: 'unavailable', reason: 'not run', p50_ms: null, p99_ms: null } };
    const progressFile = join(out, 'bench-progress-x1000.json');
    await writeFile(progressFile, JSON.stringify({ scale: 1000, vault: { notes: 7, note_bytes: 9 }, phases: reached }));
    const older = { ...results, scales: [{ ...s, phases: Object.fromEntries(Object.entries(s.phases).filter(([id]) => id !== 'admitted_search')) }] };
    const olderFile = join(out, 'older.json');
    await writeFile(olderFile, JSON.stringify(older));
    const dir = join(out, 'merged-progress');
    const cli = spawnSync(process.execPath, ['scripts/bench.mjs', '--merge', `${olderFile},${progressFile}`, '--out', dir, '--quiet'], { cwd: REPO, encoding: 'utf8' });
    expect([cli.status, cli.stderr]).toEqual([0, '']);
    const md = await readFile(join(dir, 'bench-growth.md'), 'utf8');
    expect(md).toContain(`| ×1000 | 7 | 0.0 | ${progressFile} | stopped |`);
    expect(md.split('\n').filter((l) => l.startsWith('| traversal | p50 / p99 |'))[0]).toMatch(/\| unavailable \|$/);
    expect(md.split('\n').filter((l) => l.startsWith('| admitted_search | p50 / p99 |'))[0]).toMatch(/^\| admitted_search \| p50 \/ p99 \| unavailable \|/);
    const merged = mergeResults([{ file: olderFile, results: withLaterPhases(older) }, { file: progressFile, progress: JSON.parse(await readFile(progressFile, 'utf8')) }]);
    expect(merged.scales[0]!.phases.admitted_search).toMatchObject({ status: 'unavailable', reason: NOT_IN_RUN });
    expect(merged.scales[1]!.phases.traversal).toMatchObject({ status: 'unavailable', reason: NOT_REACHED });
    expect(merged.scales[1]!.phases.cold_index).toEqual(s.phases.cold_index);
    expect(merged.scales[1]!.duration_s).toBeNull();
    expect(merged.scale_checks[1]!.value).toBe(s.phases.cold_index.peak_rss_bytes);
    const onlyProgress = spawnSync(process.execPath, ['scripts/bench.mjs', '--merge', progressFile, '--out', dir, '--quiet'], { cwd: REPO, encoding: 'utf8' });
    expect([onlyProgress.status, onlyProgress.stderr.split('\n')[0]]).toEqual([2, 'bench: --merge: needs at least one bench-results.json']);
  });

  it('prints the Markdown table to stdout and writes the same text to bench-results.md', async () => {
    const md = await readFile(join(out, 'bench-results.md'), 'utf8');
    expect(run.stdout).toBe(md);
    for (const def of PHASES) expect(md).toContain(`| ${def.label} |`);
    expect(md).toContain('## Targets (defined at ×100)');
  });

  it('exits 2 with the usage on an unknown option', () => {
    const bad = spawnSync(process.execPath, ['scripts/bench.mjs', '--scales', '1'], { cwd: REPO, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr.split('\n').slice(0, 3)).toEqual(["bench: unknown option '--scales'", '(Did you mean --scale?)', 'Usage: node scripts/bench.mjs [options]']);
  });

  it('exits 2 naming the known extensions on an unknown --only', () => {
    const bad = spawnSync(process.execPath, ['scripts/bench.mjs', '--only', 'nope'], { cwd: REPO, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr.split('\n')[0]).toBe('bench: --only: unknown extension nope (known: batch, admitted_search)');
  });

  it('exits 2 naming the option and what it expects on a bad value', () => {
    const bad = spawnSync(process.execPath, ['scripts/bench.mjs', '--scale', '1,0'], { cwd: REPO, encoding: 'utf8' });
    expect(bad.status).toBe(2);
    expect(bad.stderr.split('\n')[0]).toBe("bench: option '--scale <list>' argument '1,0' is invalid. must be an integer ≥ 1");
  });

  it('prints the help on stdout and exits 0 with --help', () => {
    const help = spawnSync(process.execPath, ['scripts/bench.mjs', '--help'], { cwd: REPO, encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout.split('\n')[0]).toBe('Usage: node scripts/bench.mjs [options]');
    expect(help.stdout).toContain('--phase-budget <s>');
  });
});

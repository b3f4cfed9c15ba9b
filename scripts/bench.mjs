#!/usr/bin/env node
/**
 * `npm run bench` — loretrace's benchmark. Builds ×N copies of a lore vault in a temp
 * folder, runs each loretrace operation and its floor / plain-pipeline anchor in separate child
 * processes of this one run, and writes medians, latency percentiles, peak RSS and ratios to
 * `<out>/bench-results.json` (validated against schemas/bench-results.schema.json) and
 * `<out>/bench-results.md` (also printed to stdout), and the growth plot of every phase over the scales
 * run, `<out>/bench-growth.svg`. Progress goes to stderr.
 *
 * Usage: node scripts/bench.mjs [--scale 1,10,100] [--runs 3] [--source <vault>] [--out .bench]
 *          [--queries 200] [--seed 7] [--dist dist] [--phases id,id] [--only batch] [--batch-drafts 50]
 *          [--phase-budget 60] [--cpu-prof] [--keep]
 *   (options parsed by scripts/cli-args.mjs; `--help` lists them)
 *        node scripts/bench.mjs --merge a.json,b.json [--out dir]   growth tables and plot over several runs
 *          (an input may be a stopped run's bench-progress.json: its scale with the phases it reached)
 * Exit: 0 results written (even if some phases are unavailable), 1 results invalid against the schema
 * or the run failed, 2 usage error. Documented in docs/PERFORMANCE.md.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBench } from './bench/run.mjs';
import { renderMarkdown, renderGrowthMarkdown } from './bench/report.mjs';
import { isProgress, mergeResults, withLaterPhases } from './bench/merge.mjs';
import { renderGrowthSvg } from './bench/plot.mjs';
import { validateResults } from './bench/validate.mjs';
import { PHASE_IDS } from './bench/phases.mjs';
import { EXTENSIONS } from './bench/extensions.mjs';
import { DEFAULT_BATCH_DRAFTS } from './bench/batch.mjs';
import { parseScriptArgs, integer, integerAtLeast, commaList } from './cli-args.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = process.env.LORETRACE_SHARED ?? resolve(REPO, '..', 'shared');
const AETHERIA = join(SHARED, 'lore', 'AetheriaLore');
const FIXTURE = join(REPO, 'lore-fixtures', 'FixtureLore');

const { opts: args, fail: usage } = parseScriptArgs('bench', 'node scripts/bench.mjs [options]', [
  { flags: '--scale <list>', description: 'copies of the source vault, comma-separated (e.g. 1,10,100,1000)', value: [1, 10, 100], shown: '1,10,100', parse: commaList(integerAtLeast(1)) },
  { flags: '--runs <n>', description: 'runs per phase, medians reported', value: 3, parse: integerAtLeast(1) },
  { flags: '--source <dir>', description: 'source vault (default ../shared/lore/AetheriaLore when present, else lore-fixtures/FixtureLore)' },
  { flags: '--out <dir>', description: 'output folder', value: '.bench', shown: '.bench' },
  { flags: '--queries <n>', description: 'size of the seeded prose query set', value: 200, parse: integerAtLeast(1) },
  { flags: '--seed <n>', description: 'seed of every deterministic choice', value: 7, parse: integer },
  { flags: '--dist <dir>', description: 'loretrace build to measure', value: join(REPO, 'dist'), shown: 'dist' },
  { flags: '--traversal-iterations <n>', description: 'traversals per run', value: 50, parse: integerAtLeast(1) },
  { flags: '--proxy-calls <n>', description: 'calls per proxy tool per run', value: 200, parse: integerAtLeast(1) },
  { flags: '--phases <list>', description: `only these phases (others recorded as skipped): ${PHASE_IDS.join(',')}`, parse: commaList() },
  { flags: '--only <extension>', description: `only the phases of this bench extension (${EXTENSIONS.map((e) => e.name).join(', ')}); with --phases, both apply` },
  { flags: '--batch-drafts <n>', description: 'drafts in the batch phase\'s corpus (retrieve --batch vs one CLI run per draft)', value: DEFAULT_BATCH_DRAFTS, parse: integerAtLeast(1) },
  { flags: '--anchor-max-scale <n>', description: 'anchors and peers run only up to this scale; above it, loretrace\'s phases only', value: 100, parse: integerAtLeast(1) },
  { flags: '--phase-budget <s>', description: 'a phase starts no new run after this many seconds (≥ 1 run always)', value: 60, parse: integerAtLeast(1) },
  { flags: '--timeout <s>', description: 'per-phase child timeout in seconds', value: 900, parse: integerAtLeast(1) },
  { flags: '--cpu-prof', description: 'write V8 CPU profiles of every phase child to <out>/profiles', value: false },
  { flags: '--keep', description: 'keep the temp folder with the scaled vaults', value: false },
  { flags: '--quiet', description: 'no progress on stderr', value: false },
  { flags: '--merge <files>', description: 'run nothing: merge these bench-results.json files (comma-separated; a later file\'s scale replaces an earlier one\'s; a stopped run\'s bench-progress.json gives its scale with the phases it reached) into <out>/bench-growth.md and <out>/bench-growth.svg', parse: commaList() },
]);

if (args.merge) {
  const out = resolve(args.out);
  await mkdir(out, { recursive: true });
  const inputs = [];
  for (const file of args.merge) {
    if (!existsSync(file)) usage(`--merge: ${file} not found`);
    const json = JSON.parse(await readFile(file, 'utf8'));
    // A stopped run left only its bench-progress.json: its scale joins with the phases it reached.
    if (isProgress(json)) {
      inputs.push({ file: resolve(file), progress: json });
      continue;
    }
    // A run from before a phase existed lists that phase as not in the run.
    const results = withLaterPhases(json);
    const errors = await validateResults(results);
    if (errors.length > 0) usage(`--merge: ${file} does not match schemas/bench-results.schema.json: ${errors.slice(0, 3).join('; ')}`);
    inputs.push({ file: resolve(file), results });
  }
  if (!inputs.some((i) => i.results)) usage('--merge: needs at least one bench-results.json');
  const merged = mergeResults(inputs);
  await writeFile(join(out, 'bench-growth.md'), renderGrowthMarkdown(merged, inputs.map((i) => i.file)));
  await writeFile(join(out, 'bench-growth.svg'), renderGrowthSvg(merged));
  if (!args.quiet) process.stderr.write(`bench: wrote ${join(out, 'bench-growth.md')} and ${join(out, 'bench-growth.svg')} from ${inputs.length} results\n`);
  process.exit(0);
}

const scales = [...new Set(args.scale)].sort((a, b) => a - b);
if (scales.length === 0) usage('--scale needs at least one scale');
const source = resolve(args.source ?? (existsSync(AETHERIA) ? AETHERIA : FIXTURE));
if (!existsSync(source)) usage(`source vault ${source} not found`);
const phases = args.phases ?? null;
for (const p of phases ?? []) if (!PHASE_IDS.includes(p)) usage(`--phases: unknown phase ${p} (known: ${PHASE_IDS.join(', ')})`);
const only = args.only === undefined ? null : EXTENSIONS.find((e) => e.name === args.only);
if (only === undefined) usage(`--only: unknown extension ${args.only} (known: ${EXTENSIONS.map((e) => e.name).join(', ')})`);
const selectedPhases = only == null ? phases : only.phases.map((p) => p.id).filter((id) => phases == null || phases.includes(id));
const out = resolve(args.out);
await mkdir(out, { recursive: true });
const cpuProfDir = args.cpuProf ? join(out, 'profiles') : null;
if (cpuProfDir) await mkdir(cpuProfDir, { recursive: true });

const started = Date.now();
let results;
try {
results = await runBench({
  source,
  scales,
  runs: args.runs,
  queries: args.queries,
  seed: args.seed,
  dist: resolve(args.dist),
  traversalIterations: args.traversalIterations,
  proxyCalls: args.proxyCalls,
  anchorMaxScale: args.anchorMaxScale,
  repo: REPO,
  packetTemplate: join(REPO, 'lore-fixtures', 'packets', 'proxy-fixture-research.packet.json'),
  timeoutMs: args.timeout * 1000,
  phaseBudgetMs: args.phaseBudget * 1000,
  phases: selectedPhases,
  cpuProfDir,
  batchDrafts: args.batchDrafts,
  keep: args.keep,
  command: ['npm run bench --', ...process.argv.slice(2)].join(' ').replace(/ --$/, ''),
  log: args.quiet ? () => {} : (line) => process.stderr.write(line + '\n'),
  // Figures so far, for a long run read before it ends (not schema-checked; bench-results.json is the result).
  progress: (partial) => writeFileSync(join(out, 'bench-progress.json'), JSON.stringify(partial, null, 2) + '\n'),
});
} catch (e) {
  process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}

const errors = await validateResults(results);
const jsonFile = join(out, 'bench-results.json');
const mdFile = join(out, 'bench-results.md');
const svgFile = join(out, 'bench-growth.svg');
await writeFile(jsonFile, JSON.stringify(results, null, 2) + '\n');
await writeFile(svgFile, renderGrowthSvg(results));
const md = renderMarkdown(results);
await writeFile(mdFile, md);
process.stdout.write(md);
if (!args.quiet) process.stderr.write(`bench: wrote ${jsonFile}, ${mdFile} and ${svgFile} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
if (errors.length > 0) {
  process.stderr.write(`bench: ${jsonFile} does not match schemas/bench-results.schema.json:\n${errors.map((e) => `  ${e}`).join('\n')}\n`);
  process.exit(1);
}

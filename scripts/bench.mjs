#!/usr/bin/env node
/**
 * `npm run bench` — loretrace's benchmark. Builds ×N copies of a lore vault in a temp
 * folder, runs each loretrace operation and its floor / plain-pipeline anchor in separate child
 * processes of this one run, and writes medians, latency percentiles, peak RSS and ratios to
 * `<out>/bench-results.json` (validated against schemas/bench-results.schema.json) and
 * `<out>/bench-results.md` (also printed to stdout). Progress goes to stderr.
 *
 * Usage: node scripts/bench.mjs [--scale 1,10,100] [--runs 3] [--source <vault>] [--out .bench]
 *          [--queries 200] [--seed 7] [--dist dist] [--phases id,id] [--phase-budget 60] [--cpu-prof] [--keep]
 * Exit: 0 results written (even if some phases are unavailable), 1 results invalid against the schema
 * or the run failed, 2 usage error. Documented in docs/PERFORMANCE.md.
 */
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import { mkdir, writeFile, readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBench } from './bench/run.mjs';
import { renderMarkdown } from './bench/report.mjs';
import { validateResults } from './bench/validate.mjs';
import { PHASE_IDS } from './bench/phases.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = process.env.LORETRACE_SHARED ?? resolve(REPO, '..', 'shared');
const AETHERIA = join(SHARED, 'lore', 'AetheriaLore');
const FIXTURE = join(REPO, 'lore-fixtures', 'FixtureLore');

const USAGE = `usage: node scripts/bench.mjs [options]
  --scale <list>      copies of the source vault, comma-separated (default 1,10,100; 300 optional)
  --runs <n>          runs per phase, medians reported (default 3)
  --source <dir>      source vault (default ../shared/lore/AetheriaLore when present, else lore-fixtures/FixtureLore)
  --out <dir>         output folder (default .bench)
  --queries <n>       size of the seeded prose query set (default 200)
  --seed <n>          seed of every deterministic choice (default 7)
  --dist <dir>        loretrace build to measure (default dist)
  --traversal-iterations <n>  traversals per run (default 50)
  --proxy-calls <n>   calls per proxy tool per run (default 200)
  --phases <list>     only these phases (others recorded as skipped): ${PHASE_IDS.join(',')}
  --phase-budget <s>  a phase starts no new run after this many seconds (default 60; ≥ 1 run always)
  --timeout <s>       per-phase child timeout in seconds (default 900)
  --cpu-prof          write V8 CPU profiles of every phase child to <out>/profiles
  --keep              keep the temp folder with the scaled vaults
  --quiet             no progress on stderr
  -h, --help`;

function usage(message) {
  process.stderr.write(`bench: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function posInt(name, v) {
  const n = Number(v);
  if (!Number.isSafeInteger(n) || n < 1) usage(`--${name} must be an integer ≥ 1 (got ${JSON.stringify(v)})`);
  return n;
}

let args;
try {
  args = parseArgs({
    options: {
      scale: { type: 'string', default: '1,10,100' },
      runs: { type: 'string', default: '3' },
      source: { type: 'string' },
      out: { type: 'string', default: '.bench' },
      queries: { type: 'string', default: '200' },
      seed: { type: 'string', default: '7' },
      dist: { type: 'string', default: join(REPO, 'dist') },
      'traversal-iterations': { type: 'string', default: '50' },
      'proxy-calls': { type: 'string', default: '200' },
      phases: { type: 'string' },
      timeout: { type: 'string', default: '900' },
      'phase-budget': { type: 'string', default: '60' },
      'cpu-prof': { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      quiet: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
    allowPositionals: false,
  }).values;
} catch (e) {
  usage(e instanceof Error ? e.message : String(e));
}
if (args.help) {
  process.stdout.write(USAGE + '\n');
  process.exit(0);
}

const scales = [...new Set(args.scale.split(',').map((s) => posInt('scale', s.trim())))].sort((a, b) => a - b);
const source = resolve(args.source ?? (existsSync(AETHERIA) ? AETHERIA : FIXTURE));
if (!existsSync(source)) usage(`source vault ${source} not found`);
const phases = args.phases ? args.phases.split(',').map((s) => s.trim()) : null;
for (const p of phases ?? []) if (!PHASE_IDS.includes(p)) usage(`--phases: unknown phase ${p} (known: ${PHASE_IDS.join(', ')})`);
const out = resolve(args.out);
await mkdir(out, { recursive: true });
const cpuProfDir = args['cpu-prof'] ? join(out, 'profiles') : null;
if (cpuProfDir) await mkdir(cpuProfDir, { recursive: true });

const started = Date.now();
let results;
try {
results = await runBench({
  source,
  scales,
  runs: posInt('runs', args.runs),
  queries: posInt('queries', args.queries),
  seed: Number.isSafeInteger(Number(args.seed)) ? Number(args.seed) : usage(`--seed must be an integer (got ${args.seed})`),
  dist: resolve(args.dist),
  traversalIterations: posInt('traversal-iterations', args['traversal-iterations']),
  proxyCalls: posInt('proxy-calls', args['proxy-calls']),
  packetTemplate: join(REPO, 'lore-fixtures', 'packets', 'proxy-fixture-research.packet.json'),
  timeoutMs: posInt('timeout', args.timeout) * 1000,
  phaseBudgetMs: posInt('phase-budget', args['phase-budget']) * 1000,
  phases,
  cpuProfDir,
  keep: args.keep,
  command: ['npm run bench --', ...process.argv.slice(2)].join(' ').replace(/ --$/, ''),
  log: args.quiet ? () => {} : (line) => process.stderr.write(line + '\n'),
});
} catch (e) {
  process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
}

const errors = await validateResults(results);
const jsonFile = join(out, 'bench-results.json');
const mdFile = join(out, 'bench-results.md');
await writeFile(jsonFile, JSON.stringify(results, null, 2) + '\n');
const md = renderMarkdown(results);
await writeFile(mdFile, md);
process.stdout.write(md);
if (!args.quiet) process.stderr.write(`bench: wrote ${jsonFile} and ${mdFile} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
if (errors.length > 0) {
  process.stderr.write(`bench: ${jsonFile} does not match schemas/bench-results.schema.json:\n${errors.map((e) => `  ${e}`).join('\n')}\n`);
  process.exit(1);
}

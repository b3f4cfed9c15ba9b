/**
 * Bench extension (scripts/bench/extensions.mjs): batch retrieval. One `loretrace retrieve --batch` over a
 * corpus of N drafts (default 50) against N separate `loretrace retrieve` CLI runs of the same drafts — what
 * a user scripting the single command would run instead — on the same warm persisted index, both through
 * the measured build (scripts/bench/loretrace-cli.mjs). Figures: wall time of the whole corpus each way
 * (`median_ms`), packets per second (`extra.packets_per_s`) and the ratio batch / single runs (target ≤ 0.1,
 * i.e. the batch at least 10 × the packets/s). The first run of each way is compared file by file: the batch
 * must write the very bytes the single runs write (`extra.identical_outputs`).
 *
 * The corpus (written into the scale's work folder, deterministic): the FixtureLore draft
 * lore-fixtures/packets/brinefall-intake.turn-01.mara-voss.draft.packet.json as `bench-batch.dNNN`, each with
 * its projected context beside it and its own `<id>.policy.json` whose seed is the NNN-th of the first
 * copy's notes of at least 200 bytes (every 7th, wrapping), allowed prefix that copy, depth 2, `max_refs:8`.
 * The persisted index is the cold_index phase's when it ran, else one built here before timing.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gc, now, runIndices } from './task-kit.mjs';
import { requireApi } from './loretrace.mjs';

const CLI = join(dirname(fileURLToPath(import.meta.url)), 'loretrace-cli.mjs');
const DRAFT = ['lore-fixtures', 'packets', 'brinefall-intake.turn-01.mara-voss.draft.packet.json'];
const CONTEXT = ['lore-fixtures', 'packets', 'brinefall-intake.turn-01.mara-voss.projected-context.json'];

/** Drafts in the corpus when `--batch-drafts` is not given. */
export const DEFAULT_BATCH_DRAFTS = 50;

/** Fixed ledger clock, so both ways write byte-identical ledgers (reproducible-builds' SOURCE_DATE_EPOCH). */
const EPOCH = '1735689600';

/**
 * Run the measured CLI once, synchronously (the wall time is the figure).
 * @param {string} distDir @param {string[]} argv
 * @returns {{ status: number | null, stdout: string, stderr: string }}
 */
function cli(distDir, argv) {
  const r = spawnSync(process.execPath, [CLI, distDir, ...argv], { encoding: 'utf8', env: { ...process.env, SOURCE_DATE_EPOCH: EPOCH, LORETRACE_INDEX_DIR: '' }, maxBuffer: 256 * 1024 * 1024 });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/**
 * Seeds for the drafts: notes of the first copy of at least 200 bytes, in path order, every 7th (wrapping).
 * @param {string} root @param {string[]} paths vault-relative POSIX paths @param {number} count
 */
function pickSeeds(root, paths, count) {
  const copy = paths[0].split('/')[0];
  const notes = paths.filter((p) => p.startsWith(`${copy}/`) && p.endsWith('.md') && statSync(join(root, ...p.split('/'))).size >= 200).sort();
  if (notes.length === 0) throw new Error(`bench batch: no note of at least 200 bytes under ${copy}/`);
  return { copy, seeds: Array.from({ length: count }, (_, i) => notes[(i * 7) % notes.length].normalize('NFC')) };
}

/**
 * Write the corpus: per draft `<id>.draft.packet.json`, `<id>.projected-context.json`, `<id>.policy.json`.
 * Each policy's seed is a random note the template draft never names, so the runs pass
 * `--allow-off-scene-policy` (the bench measures throughput, not scene fit).
 * @returns {Promise<string[]>} the ids, in corpus order
 */
async function writeCorpus({ repo, root, paths, namespace, dir, count }) {
  const template = JSON.parse(readFileSync(join(repo, ...DRAFT), 'utf8'));
  const context = readFileSync(join(repo, ...CONTEXT), 'utf8');
  const { copy, seeds } = pickSeeds(root, paths, count);
  await mkdir(dir, { recursive: true });
  const ids = [];
  for (let i = 0; i < count; i++) {
    const id = `bench-batch.d${String(i).padStart(3, '0')}`;
    const draft = structuredClone(template);
    draft.packet_id = `${id}.packet`;
    draft.packet_prompt_text = draft.packet_prompt_text.replace(`Packet id: ${template.packet_id}`, `Packet id: ${draft.packet_id}`);
    draft.hidden_context_audit.omitted_context_refs = [`${namespace}:bench-hidden/none.md`];
    const policy = {
      max_link_depth: 2,
      allowed_prefixes: [`${namespace}:${copy}/`],
      required_seed_refs: [`${namespace}:${seeds[i]}`],
      follow_link_classes: ['wikilink'],
      stop_conditions: ['max_refs:8'],
    };
    await writeFile(join(dir, `${id}.draft.packet.json`), JSON.stringify(draft, null, 2) + '\n');
    await writeFile(join(dir, `${id}.projected-context.json`), context);
    await writeFile(join(dir, `${id}.policy.json`), JSON.stringify(policy, null, 2) + '\n');
    ids.push(id);
  }
  return ids;
}

/** Every file under `dir`: relative path → bytes as text. @param {string} dir */
function filesUnder(dir) {
  /** @type {Record<string, string>} */
  const out = {};
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out[relative(dir, join(d, e.name))] = readFileSync(join(d, e.name), 'utf8');
    }
  };
  walk(dir);
  return out;
}

/**
 * The task: corpus, index, then the batch runs and the single-run passes, each timed whole.
 * @param {{ root: string, paths: string[], namespace: string, runs: number, workDir: string, distDir: string,
 *   indexDir: string | null, repo: string, drafts: number, concurrency: number, skip_phases?: string[] }} p
 *   (`skip_phases` with `retrieve_single_runs`: the batch runs only)
 */
async function retrieveBatchTask(p) {
  await requireApi(p.distDir, ['retrieveBatch']);
  const base = join(p.workDir, 'batch');
  await rm(base, { recursive: true, force: true });
  const corpus = join(base, 'corpus');
  const ids = await writeCorpus({ repo: p.repo, root: p.root, paths: p.paths, namespace: p.namespace, dir: corpus, count: p.drafts });
  let indexDir = p.indexDir;
  if (indexDir == null) {
    indexDir = join(base, 'index');
    const r = cli(p.distDir, ['index', '--lore', p.root, '--index-dir', indexDir, '--json']);
    if (r.status !== 0) throw new Error(`bench batch: loretrace index exited ${r.status}: ${r.stderr.slice(0, 400)}`);
  }
  const vault = ['--lore', p.root, '--index-dir', indexDir];

  const batchMs = [];
  let summary = null;
  for (const r of runIndices(p.runs)) {
    gc();
    const t0 = now();
    const run = cli(p.distDir, ['retrieve', ...vault, '--batch', corpus, '--out-dir', join(base, `batch-${r}`), '--concurrency', String(p.concurrency), '--allow-off-scene-policy', '--json']);
    batchMs.push(now() - t0);
    if (run.status !== 0 && run.status !== 1) throw new Error(`bench batch: retrieve --batch exited ${run.status}: ${run.stderr.slice(0, 400)}`);
    summary ??= JSON.parse(run.stdout);
  }

  // The single runs are the anchor: above --anchor-max-scale they are not run (at ×1000 each CLI run
  // loads the index and resolves the vault's links on its own: hours for 50 drafts).
  if (p.skip_phases?.includes('retrieve_single_runs')) {
    return { phases: { retrieve_batch: batchPhase(batchMs, ids, p, summary) } };
  }
  const singleMs = [];
  let singleFailed = 0;
  for (const r of runIndices(p.runs)) {
    gc();
    const out = join(base, `single-${r}`);
    const t0 = now();
    for (const id of ids) {
      const packet = join(out, `${id}.packet.json`);
      const run = cli(p.distDir, [
        'retrieve', ...vault, '--packet', join(corpus, `${id}.draft.packet.json`), '--projected-context', join(corpus, `${id}.projected-context.json`),
        '--policy', join(corpus, `${id}.policy.json`), '--allow-off-scene-policy', '--out', packet, '--capture-out', packet.replace(/\.json$/, '.lore_access.json'),
      ]);
      if (r === 0 && run.status !== 0) singleFailed += 1;
    }
    singleMs.push(now() - t0);
  }

  const batchFiles = filesUnder(join(base, 'batch-0'));
  const singleFiles = filesUnder(join(base, 'single-0'));
  const names = [...new Set([...Object.keys(batchFiles), ...Object.keys(singleFiles)])].sort();
  const differing = names.filter((n) => batchFiles[n] !== singleFiles[n]);
  return {
    phases: {
      retrieve_batch: batchPhase(batchMs, ids, p, summary),
      retrieve_single_runs: {
        samples_ms: singleMs,
        extra: {
          drafts: ids.length, packets_per_s: packetsPerSecond(singleMs, ids.length), failed: singleFailed, index_loads: ids.length,
          files_compared: names.length, identical_outputs: differing.length === 0, differing_files: differing.slice(0, 5),
        },
      },
    },
  };
}

/** Packets per second of the median wall time `ms` (one figure per run) for `count` drafts; null without runs. */
function packetsPerSecond(ms, count) {
  return ms.length ? (count * 1000) / [...ms].sort((a, b) => a - b)[Math.floor((ms.length - 1) / 2)] : null;
}

/** The retrieve_batch phase's raw figures: wall times of the batch runs and the first run's summary totals. */
function batchPhase(batchMs, ids, p, summary) {
  const totals = summary?.totals ?? null;
  return {
    samples_ms: batchMs,
    extra: { drafts: ids.length, concurrency: p.concurrency, packets_per_s: packetsPerSecond(batchMs, ids.length), ok: totals?.ok ?? null, failed: totals?.failed ?? null, index_loads: 1 },
  };
}

/** The extension: two phases, one ratio, one task run once per scale after the core phases. */
export const batchExtension = {
  name: 'batch',
  phases: [
    { id: 'retrieve_batch', kind: 'loretrace', stat: 'time', label: 'retrieve --batch, N drafts in one CLI run' },
    { id: 'retrieve_single_runs', kind: 'anchor', stat: 'time', label: 'retrieve, the same N drafts as N CLI runs' },
  ],
  ratios: [
    { id: 'retrieve_batch_vs_single_runs', num: ['retrieve_batch', 'median_ms'], den: ['retrieve_single_runs', 'median_ms'], target: 0.1 },
  ],
  tasks: { retrieve_batch: retrieveBatchTask },
  taskPhases: { retrieve_batch: ['retrieve_batch', 'retrieve_single_runs'] },
  /**
   * @param {(task: string, params: object, deps?: [string, boolean][], extra?: object) => Promise<any>} step
   * @param {{ root: string, paths: string[], namespace: string, workDir: string, indexDir: string | null, common: object, distDir: string, repo: string, options: { batchDrafts?: number } }} ctx
   */
  async run(step, ctx) {
    await step('retrieve_batch', {
      ...ctx.common, root: ctx.root, paths: ctx.paths, namespace: ctx.namespace, workDir: ctx.workDir, distDir: ctx.distDir,
      indexDir: ctx.indexDir, repo: ctx.repo, drafts: ctx.options?.batchDrafts ?? DEFAULT_BATCH_DRAFTS, concurrency: 4,
    });
  },
};


/**
 * The benchmark orchestrator: builds the scaled vaults, runs every phase in its own child process in
 * a fixed order, and assembles the bench-results object (schemas/bench-results.schema.json).
 *
 * Order per scale (later phases reuse what earlier ones left on disk):
 *   read_floor → remark_parse → plain_pipeline (saves plain index JSON) → cold_index (leaves the
 *   persisted index) → plain_warm_start → warm_start → search (writes its chunks) → plain_search (same
 *   chunks) → traversal → proxy (lore_search, lore_read; finds which sampled line ranges the session
 *   admits) → proxy_floor (the same ranges) → incremental (edits files, restores them).
 */
import { mkdtemp, mkdir, rm, readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { cpus, totalmem, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { PHASES, PHASE_IDS, RATIOS, TARGET_SCALE } from './phases.mjs';
import { median, ratio } from './stats.mjs';
import { listFiles, buildScaledVault, copyName } from './vault.mjs';
import { collectSentences, generateQueryItems, knownItemRate, nameQueryItems } from './queries.mjs';
import { makeProcessor, decode, headingChunks } from './plain.mjs';
import { mulberry32, sampleIndices } from './prng.mjs';
import { runChild } from './runner.mjs';
import { runProxyClient } from './proxy-client.mjs';

/** Which phases each child task produces. */
const TASK_PHASES = {
  read_floor: ['read_floor'],
  remark_parse: ['remark_parse'],
  plain_pipeline: ['plain_pipeline'],
  cold_index: ['cold_index'],
  plain_warm_start: ['plain_warm_start'],
  warm_start: ['warm_start'],
  search: ['search'],
  plain_search: ['plain_search'],
  traversal: ['traversal'],
  proxy_floor: ['proxy_floor'],
  proxy: ['proxy_lore_search', 'proxy_lore_read'],
  incremental: ['incremental_1_file', 'incremental_1_percent'],
};

/**
 * @typedef {object} BenchOptions
 * @property {string} source   source vault (absolute)
 * @property {number[]} scales  copies per run, e.g. [1, 10, 100]
 * @property {number} runs      runs per phase ≥ 1
 * @property {number} queries   query-set size (200)
 * @property {number} seed      PRNG seed of every deterministic choice
 * @property {string} dist      loretrace build folder (absolute)
 * @property {number} traversalIterations traversals per run
 * @property {number} proxyCalls calls per proxy tool per run
 * @property {string} packetTemplate responder packet JSON whose lore_access the proxy phase replaces
 * @property {number} timeoutMs per child
 * @property {number} phaseBudgetMs a phase starts no new run after this many milliseconds (≥ 1 run)
 * @property {string[] | null} phases only these phase ids (others `skipped`); null = all
 * @property {string | null} cpuProfDir write `--cpu-prof` profiles of loretrace phases here
 * @property {boolean} keep     keep the temp folder
 * @property {string} command   command line recorded in the results
 * @property {(line: string) => void} log progress sink (stderr)
 */

/** Empty phase record. */
function phaseRecord(def, status, reason) {
  return {
    kind: def.kind, label: def.label, status, reason, runs: 0,
    median_ms: null, p50_ms: null, p99_ms: null, calls_per_s: null, samples_ms: [], peak_rss_bytes: null, extra: {},
  };
}

/** Fill a phase record from a task's raw phase output. */
function fillPhase(rec, raw, maxRss) {
  rec.status = 'ok';
  rec.reason = null;
  rec.peak_rss_bytes = maxRss ?? null;
  rec.extra = raw.extra ?? {};
  if (raw.samples_ms) {
    rec.samples_ms = raw.samples_ms;
    rec.runs = raw.samples_ms.length;
    rec.median_ms = median(raw.samples_ms);
  }
  if (raw.p50_ms) {
    rec.samples_ms = raw.p50_ms;
    rec.runs = raw.p50_ms.length;
    rec.p50_ms = median(raw.p50_ms);
    rec.p99_ms = median(raw.p99_ms);
  }
  if (raw.calls_per_s) rec.calls_per_s = median(raw.calls_per_s);
}

/** Top-5 drift between loretrace and plain BM25 per query. */
export function compareTop5(lt, plain) {
  const n = Math.min(lt?.length ?? 0, plain?.length ?? 0);
  if (n === 0) return { queries_compared: 0, top5_set_drift: null, top5_order_drift: null, mean_top5_overlap: null };
  let setDiff = 0, orderDiff = 0, overlap = 0;
  for (let i = 0; i < n; i++) {
    const a = lt[i], b = plain[i];
    const sa = new Set(a);
    const common = b.filter((x) => sa.has(x)).length;
    if (a.length !== b.length || common !== b.length) setDiff++;
    if (a.length !== b.length || a.some((x, j) => x !== b[j])) orderDiff++;
    overlap += b.length === 0 ? (a.length === 0 ? 1 : 0) : common / b.length;
  }
  return { queries_compared: n, top5_set_drift: setDiff / n, top5_order_drift: orderDiff / n, mean_top5_overlap: overlap / n };
}

/** Compute every ratio of a scale from its phases. */
function computeRatios(phases) {
  const out = {};
  for (const def of RATIOS) {
    const [np, ns] = def.num;
    const [dp, ds] = def.den;
    const a = phases[np].status === 'ok' ? phases[np][ns] : null;
    const b = phases[dp].status === 'ok' ? phases[dp][ds] : null;
    const value = ratio(a, b);
    out[def.id] = {
      numerator: `${np}.${ns}`, denominator: `${dp}.${ds}`, value, target: def.target,
      met: def.target == null || value == null ? null : value <= def.target,
    };
  }
  return out;
}

/**
 * Deterministic line ranges for the proxy phases: `count` heading chunks of the first copy, sampled
 * with the seeded PRNG from the source vault's plain heading chunks.
 */
async function pickReads(source, paths, count, seed) {
  const processor = makeProcessor();
  const all = [];
  for (const rel of paths) {
    const text = decode(await readFile(join(source, ...rel.split('/'))));
    for (const c of headingChunks(rel, text, processor.parse(text))) {
      all.push({ path: `${copyName(0)}/${rel}`, ref_path: `${copyName(0)}/${rel}`.normalize('NFC'), line_start: c.line_start, line_end: c.line_end });
    }
  }
  return sampleIndices(mulberry32(seed), all.length, count).map((i) => all[i]);
}

/**
 * Run the benchmark.
 * @param {BenchOptions} o
 * @returns {Promise<any>} a bench-results object
 */
export async function runBench(o) {
  const log = o.log;
  const srcPaths = await listFiles(o.source);
  if (srcPaths.length === 0) throw new Error(`bench: no .md files in source vault ${o.source}`);
  const sentences = await collectSentences(o.source, srcPaths);
  const items = generateQueryItems(sentences, o.queries, o.seed);
  const queries = items.map((q) => q.query);
  const sources = items.map((q) => q.source);
  const nameItems = nameQueryItems(srcPaths, 100, o.seed + 3);
  const nameQueries = nameItems.map((q) => q.query);
  const reads = await pickReads(o.source, srcPaths, 50, o.seed + 1);
  const tmp = await mkdtemp(join(tmpdir(), 'loretrace-bench-'));
  log(`bench: ${srcPaths.length} notes in ${o.source}; temp folder ${tmp}`);
  const selected = (id) => o.phases == null || o.phases.includes(id);
  const scales = [];
  try {
    for (const scale of o.scales) {
      const t0 = Date.now();
      const base = join(tmp, `x${scale}`);
      const work = join(base, 'work');
      await mkdir(work, { recursive: true });
      const vault = await buildScaledVault(o.source, base, scale);
      const paths = await listFiles(vault.root);
      log(`bench ×${scale}: ${vault.notes} notes, ${(vault.note_bytes / 1e6).toFixed(1)} MB`);
      /** @type {Record<string, any>} */
      const phases = Object.fromEntries(PHASES.map((d) => [d.id, phaseRecord(d, 'unavailable', 'not run')]));
      const ctx = { indexDir: null, plainFile: null, chunksFile: null, ltTop5: null, plainTop5: null, ltLoc: null, plainLoc: null, plainChunks: null, namespace: vault.namespace, hits: [] };

      const profArgs = (task) => (o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`, `--cpu-prof-name=x${scale}-${task}-\${pid}.cpuprofile`] : []);
      /** Run a task unless none of its phases are selected or a dependency is missing. */
      const run = async (task, params, deps = [], extra = {}) => {
        const ids = TASK_PHASES[task];
        if (!ids.some(selected)) {
          for (const id of ids) phases[id] = phaseRecord(PHASES.find((d) => d.id === id), 'skipped', 'not selected with --phases');
          return null;
        }
        const missing = deps.filter(([, ok]) => !ok).map(([what]) => what);
        if (missing.length > 0) {
          for (const id of ids) phases[id] = phaseRecord(PHASES.find((d) => d.id === id), 'unavailable', `needs ${missing.join(', ')}, which did not run`);
          log(`bench ×${scale}: ${task} unavailable (needs ${missing.join(', ')})`);
          return null;
        }
        const started = Date.now();
        const outcome = await runChild(task, { ...params, phase_budget_ms: o.phaseBudgetMs }, { timeoutMs: o.timeoutMs, execArgv: profArgs(task), ...extra });
        const secs = ((Date.now() - started) / 1000).toFixed(1);
        if (outcome.status !== 'ok') {
          for (const id of ids) {
            phases[id] = phaseRecord(PHASES.find((d) => d.id === id), outcome.status, outcome.reason);
            if (outcome.status === 'failed') phases[id].peak_rss_bytes = outcome.max_rss_bytes ?? null;
          }
          log(`bench ×${scale}: ${task} ${outcome.status}: ${outcome.reason} (${secs} s)`);
          return null;
        }
        for (const id of ids) {
          const raw = outcome.result.phases?.[id];
          if (raw) fillPhase(phases[id], raw, outcome.max_rss_bytes);
          else phases[id] = phaseRecord(PHASES.find((d) => d.id === id), 'failed', `task ${task} returned no ${id} figures`);
        }
        log(`bench ×${scale}: ${task} ok (${secs} s)`);
        return outcome.result;
      };

      const common = { root: vault.root, paths, runs: o.runs, distDir: o.dist, workDir: work };
      await run('read_floor', common);
      await run('remark_parse', common);
      const plainFile = join(work, 'plain-index.json');
      const pp = await run('plain_pipeline', { ...common, plainFile });
      if (pp) ctx.plainFile = plainFile;
      ctx.plainChunks = phases.plain_pipeline.extra?.chunks ?? null;
      const cold = await run('cold_index', common);
      if (cold) ctx.indexDir = cold.data.index_dir;
      const hasIndex = ['cold_index', ctx.indexDir != null];
      await run('plain_warm_start', { plainFile, runs: o.runs, query: queries[0] }, [['plain_pipeline', ctx.plainFile != null]]);
      await run('warm_start', { ...common, indexDir: ctx.indexDir, query: queries[0] }, [hasIndex]);
      const chunksFile = join(work, 'chunks.jsonl');
      const sr = await run('search', { ...common, indexDir: ctx.indexDir, queries, nameQueries, chunksFile }, [hasIndex]);
      if (sr) {
        ctx.ltTop5 = sr.data.top5;
        ctx.ltLoc = sr.data.top5loc;
        ctx.ltNameLoc = sr.data.nameLoc;
        ctx.hits = sr.data.hits;
      }
      const ps = await run('plain_search', { root: vault.root, paths, namespace: vault.namespace, runs: o.runs, queries, nameQueries, chunksFile: sr ? chunksFile : null });
      if (ps && ps.data.chunks_source === 'loretrace') ctx.plainTop5 = ps.data.top5;
      if (ps) {
        ctx.plainLoc = ps.data.top5loc;
        ctx.plainNameLoc = ps.data.nameLoc;
      }
      await run('traversal', { ...common, indexDir: ctx.indexDir, queries: queries.slice(0, 10), iterations: o.traversalIterations }, [hasIndex]);
      await run(
        'proxy',
        { ...common, indexDir: ctx.indexDir, ledgerDir: join(work, 'proxy-ledger'), packetTemplate: o.packetTemplate },
        [hasIndex],
        { onReady: async (info) => Object.assign(ctx, { proxy: await runProxyClient(info, { namespace: vault.namespace, queries, reads, calls: o.proxyCalls, runs: o.runs, budgetMs: o.phaseBudgetMs }) }) },
      );
      await run('proxy_floor', { root: vault.root, reads: ctx.proxy?.admitted_reads ?? reads, calls: o.proxyCalls, runs: o.runs, workDir: work });
      for (const id of TASK_PHASES.proxy) {
        if (phases[id].status !== 'ok') continue;
        const raw = ctx.proxy?.[id];
        const serverExtra = phases[id].extra;
        if (!raw) phases[id] = { ...phaseRecord(PHASES.find((d) => d.id === id), 'failed', 'the HTTP client did not run'), peak_rss_bytes: phases[id].peak_rss_bytes };
        else if (raw.error) phases[id] = { ...phaseRecord(PHASES.find((d) => d.id === id), 'failed', raw.error), peak_rss_bytes: phases[id].peak_rss_bytes };
        else fillPhase(phases[id], { ...raw, extra: { ...serverExtra, ...raw.extra } }, phases[id].peak_rss_bytes);
      }
      const rand = mulberry32(o.seed + 2);
      const order = sampleIndices(rand, paths.length, paths.length);
      const onePaths = [paths[order[0]]];
      const pctPaths = order.slice(1, 1 + Math.max(1, Math.ceil(paths.length / 100))).map((i) => paths[i]);
      await run('incremental', { ...common, indexDir: ctx.indexDir, onePaths, pctPaths }, [hasIndex]);

      scales.push({
        scale,
        vault: { notes: vault.notes, note_bytes: vault.note_bytes, files: vault.files, bytes: vault.bytes, plain_chunks: ctx.plainChunks },
        duration_s: (Date.now() - t0) / 1000,
        phases: Object.fromEntries(PHASE_IDS.map((id) => [id, phases[id]])),
        ratios: computeRatios(phases),
        quality: {
          ...compareTop5(ctx.ltTop5, ctx.plainTop5),
          known_item_at_5: knownItemRate(sources, ctx.ltLoc),
          plain_known_item_at_5: knownItemRate(sources, ctx.plainLoc),
          name_lookup_at_5: knownItemRate(nameItems.map((q) => q.source), ctx.ltNameLoc),
          plain_name_lookup_at_5: knownItemRate(nameItems.map((q) => q.source), ctx.plainNameLoc),
        },
      });
      if (!o.keep) await rm(base, { recursive: true, force: true });
    }
  } finally {
    if (!o.keep) await rm(tmp, { recursive: true, force: true });
    else log(`bench: kept ${tmp}`);
  }

  const targetScale = scales.some((s) => s.scale === TARGET_SCALE) ? TARGET_SCALE : Math.max(...scales.map((s) => s.scale));
  const at = scales.find((s) => s.scale === targetScale);
  const targets = RATIOS.filter((r) => r.target != null).map((r) => ({
    ratio: r.id, target: r.target, scale: targetScale, value: at.ratios[r.id].value, met: at.ratios[r.id].met,
  }));
  const cpu = cpus();
  return {
    schema_version: '1',
    generated_at: new Date().toISOString(),
    command: o.command,
    machine: {
      nproc: cpu.length, cpu_model: (cpu[0]?.model ?? 'unknown').trim(), total_memory_bytes: totalmem(),
      node_version: process.version, platform: process.platform, arch: process.arch,
    },
    params: {
      source: o.source, namespace: basename(o.source), scales: o.scales, runs: o.runs, phase_budget_s: o.phaseBudgetMs / 1000,
      query_count: queries.length, seed: o.seed, traversal_iterations: o.traversalIterations, proxy_calls: o.proxyCalls, dist: o.dist,
    },
    queries: {
      count: queries.length, unique: new Set(queries).size,
      sha256: createHash('sha256').update(queries.join('\n')).digest('hex'), sample: queries.slice(0, 5),
    },
    scales,
    targets,
  };
}

/**
 * The benchmark orchestrator: builds the scaled vaults, runs every phase in its own child process in
 * a fixed order, and assembles the bench-results object (schemas/bench-results.schema.json).
 *
 * Order per scale (later phases reuse what earlier ones left on disk):
 *   read_floor → remark_parse → plain_pipeline (saves plain index JSON) → cold_index (leaves the
 *   persisted index) → plain_warm_start → warm_start → search (writes its chunks) → plain_search and the
 *   FlexSearch peers (same chunks, same queries) → traversal → proxy over HTTP (lore_search, lore_read;
 *   finds which sampled line ranges the session admits and records loretrace's response bytes) →
 *   proxy_floor (the same ranges) → http_floor (the same bytes over bare node:http) → lore_read over MCP
 *   stdio (loretrace serve --mcp) → the MCP filesystem server's read_text_file of the same notes →
 *   incremental (edits files, restores them) → extension phases (scripts/bench/extensions.mjs).
 * Above `anchorMaxScale` only loretrace's phases run (anchors and peers are recorded as skipped).
 */
import { mkdtemp, mkdir, rm, readFile } from 'node:fs/promises';
import { existsSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { cpus, totalmem, tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PHASES, PHASE_IDS, RATIOS, SCALE_CHECKS, TARGET_SCALE, denominatorTerms } from './phases.mjs';
import { EXTENSIONS } from './extensions.mjs';
import { median, ratio } from './stats.mjs';
import { listFiles, buildScaledVault, copyName } from './vault.mjs';
import { collectSentences, generateQueryItems, knownItemRate, nameQueryItems } from './queries.mjs';
import { makeProcessor, decode, headingChunks } from './plain.mjs';
import { mulberry32, sampleIndices } from './prng.mjs';
import { runChild } from './runner.mjs';
import { runProxyClient, runHttpFloorClient } from './proxy-client.mjs';
import { runMcpStdio } from './mcp-stdio-client.mjs';
import { writeBenchPacket, BENCH_LIMIT_OVERRIDES } from './proxy-packet.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));

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
  flexsearch_default_search: ['flexsearch_default_search'],
  flexsearch_match_search: ['flexsearch_match_search'],
  proxy: ['proxy_lore_search', 'proxy_lore_read'],
  http_floor: ['http_floor'],
  incremental: ['incremental_1_file', 'incremental_1_percent'],
  ...Object.assign({}, ...EXTENSIONS.map((e) => e.taskPhases)),
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
 * @property {number} [anchorMaxScale] anchors and peers run only at scales ≤ this (default: every scale)
 * @property {string} [repo] repository root (for the MCP filesystem server in node_modules); default: this script's
 * @property {string} packetTemplate responder packet JSON whose lore_access the proxy phase replaces
 * @property {number} timeoutMs per child
 * @property {number} phaseBudgetMs a phase starts no new run after this many milliseconds (≥ 1 run)
 * @property {string[] | null} phases only these phase ids (others `skipped`); null = all
 * @property {string | null} cpuProfDir write `--cpu-prof` profiles of loretrace phases here
 * @property {boolean} keep     keep the temp folder
 * @property {string} command   command line recorded in the results
 * @property {(line: string) => void} log progress sink (stderr)
 * @property {(partial: { scale: number, vault: object, phases: Record<string, any> }) => void} [progress] called after every task with the scale's phases so far
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

/** The statistic `stat` of phase `id`, or null when the phase did not run ok. */
function figure(phases, id, stat) {
  return phases[id]?.status === 'ok' ? phases[id][stat] : null;
}

/**
 * Every ratio of a scale from its phases (a denominator of several terms is their sum).
 * @param {Record<string, any>} phases phase records by id
 */
export function computeRatios(phases) {
  const out = {};
  for (const def of RATIOS) {
    const [np, ns] = def.num;
    const terms = denominatorTerms(def);
    const a = figure(phases, np, ns);
    const parts = terms.map(([dp, ds]) => figure(phases, dp, ds));
    const b = parts.some((x) => x == null) ? null : parts.reduce((x, y) => x + y, 0);
    const value = ratio(a, b);
    out[def.id] = {
      numerator: `${np}.${ns}`, denominator: terms.map(([dp, ds]) => `${dp}.${ds}`).join(' + '), value, target: def.target,
      met: def.target == null || value == null ? null : value <= def.target,
    };
  }
  return out;
}

/**
 * The cross-scale checks (SCALE_CHECKS) over the scales that ran; a check whose scales did not both
 * run ok has value null.
 * @param {any[]} scales
 */
export function computeScaleChecks(scales) {
  const at = (scale, id, stat) => {
    const s = scales.find((x) => x.scale === scale);
    return s ? figure(s.phases, id, stat) : null;
  };
  return SCALE_CHECKS.map((c) => {
    const value = c.kind === 'growth' ? ratio(at(c.scale, c.phase, c.stat), at(c.base_scale, c.phase, c.stat)) : at(c.scale, c.phase, c.stat);
    return { id: c.id, kind: c.kind, phase: c.phase, stat: c.stat, scale: c.scale, base_scale: c.base_scale, value, target: c.target, met: value == null ? null : value <= c.target };
  });
}

/** Where the MCP filesystem server's entry point is (its package.json `bin`), or null when not installed. */
function filesystemServerEntry(repo) {
  const dir = join(repo, 'node_modules', '@modelcontextprotocol', 'server-filesystem');
  const version = peerVersion(repo, '@modelcontextprotocol/server-filesystem');
  if (version == null) return null;
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const bin = typeof pkg.bin === 'string' ? pkg.bin : Object.values(pkg.bin ?? {})[0];
  const entry = bin ? join(dir, bin) : null;
  return entry && existsSync(entry) ? { entry, version } : null;
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
  const repo = o.repo ?? join(HERE, '..', '..');
  const srcPaths = await listFiles(o.source);
  if (srcPaths.length === 0) throw new Error(`bench: no .md files in source vault ${o.source}`);
  const sentences = await collectSentences(o.source, srcPaths);
  const items = generateQueryItems(sentences, o.queries, o.seed);
  const queries = items.map((q) => q.query);
  const sources = items.map((q) => q.source);
  const nameItems = nameQueryItems(srcPaths, 100, o.seed + 3);
  const nameQueries = nameItems.map((q) => q.query);
  const nameSources = nameItems.map((q) => q.source);
  const reads = await pickReads(o.source, srcPaths, 50, o.seed + 1);
  const fsServer = filesystemServerEntry(repo);
  const tmp = await mkdtemp(join(tmpdir(), 'loretrace-bench-'));
  log(`bench: ${srcPaths.length} notes in ${o.source}; temp folder ${tmp}`);
  const scales = [];
  try {
    for (const scale of o.scales) {
      scales.push(await runScale(scale, { o, log, tmp, repo, queries, sources, nameQueries, nameSources, reads, fsServer }));
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
    schema_version: '2',
    generated_at: new Date().toISOString(),
    command: o.command,
    machine: {
      nproc: cpu.length, cpu_model: (cpu[0]?.model ?? 'unknown').trim(), total_memory_bytes: totalmem(),
      node_version: process.version, platform: process.platform, arch: process.arch,
    },
    params: {
      source: o.source, namespace: basename(o.source), scales: o.scales, runs: o.runs, phase_budget_s: o.phaseBudgetMs / 1000,
      query_count: queries.length, seed: o.seed, traversal_iterations: o.traversalIterations, proxy_calls: o.proxyCalls, dist: o.dist,
      anchor_max_scale: o.anchorMaxScale ?? null,
    },
    peers: {
      flexsearch: peerVersion(repo, 'flexsearch'),
      mcp_filesystem_server: fsServer?.version ?? null,
      minisearch: peerVersion(repo, 'minisearch'),
    },
    queries: {
      count: queries.length, unique: new Set(queries).size,
      sha256: createHash('sha256').update(queries.join('\n')).digest('hex'), sample: queries.slice(0, 5),
    },
    scales,
    targets,
    scale_checks: computeScaleChecks(scales),
  };
}

/** The installed version of package `name` (its package.json in the repository's node_modules), or null. */
function peerVersion(repo, name) {
  const file = join(repo, 'node_modules', ...name.split('/'), 'package.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).version ?? null : null;
}

/**
 * One scale: build the ×N vault, run every phase in order, collect ratios and quality figures.
 * @param {number} scale
 * @param {{ o: BenchOptions, log: (line: string) => void, tmp: string, repo: string, queries: string[], sources: any[], nameQueries: string[], nameSources: any[], reads: any[], fsServer: { entry: string, version: string } | null }} env
 */
async function runScale(scale, env) {
  const { o, log, tmp, repo, queries, sources, nameQueries, nameSources, reads, fsServer } = env;
  const t0 = Date.now();
  const base = join(tmp, `x${scale}`);
  const work = join(base, 'work');
  await mkdir(work, { recursive: true });
  const vault = await buildScaledVault(o.source, base, scale);
  const paths = await listFiles(vault.root);
  log(`bench ×${scale}: ${vault.notes} notes, ${(vault.note_bytes / 1e6).toFixed(1)} MB`);
  /** @type {Record<string, any>} */
  const phases = Object.fromEntries(PHASES.map((d) => [d.id, phaseRecord(d, 'unavailable', 'not run')]));
  const defOf = (id) => PHASES.find((d) => d.id === id);
  // Progress: after every task the phases so far (a long scale can be read before it ends).
  const progress = (line) => {
    log(line);
    o.progress?.({ scale, vault: { notes: vault.notes, note_bytes: vault.note_bytes }, phases });
  };
  const comparative = scale <= (o.anchorMaxScale ?? Infinity);
  /** Why phase `id` does not run at this scale, or null when it does. */
  const skipReason = (id) => {
    if (o.phases != null && !o.phases.includes(id)) return 'not selected with --phases';
    if (!comparative && defOf(id).kind !== 'loretrace') return `anchors and peers run up to ×${o.anchorMaxScale} (--anchor-max-scale)`;
    return null;
  };
  const ctx = { indexDir: null, plainFile: null, ltTop5: null, plainTop5: null, ltLoc: null, plainLoc: null, ltNameLoc: null, plainNameLoc: null, plainChunks: null, peers: {}, proxy: null, stdioReads: null };

  const profArgs = (task) => (o.cpuProfDir ? ['--cpu-prof', `--cpu-prof-dir=${o.cpuProfDir}`, `--cpu-prof-name=x${scale}-${task}-\${pid}.cpuprofile`] : []);
  /** Record `ids` as not run when none of them may run or a dependency is missing; true when they may run. */
  const admit = (label, ids, deps) => {
    const reasons = ids.map(skipReason);
    if (reasons.every((r) => r != null)) {
      ids.forEach((id, i) => (phases[id] = phaseRecord(defOf(id), 'skipped', reasons[i])));
      return false;
    }
    const missing = deps.filter(([, ok]) => !ok).map(([what]) => what);
    if (missing.length > 0) {
      for (const id of ids) phases[id] = phaseRecord(defOf(id), 'unavailable', `needs ${missing.join(', ')}, which did not run`);
      log(`bench ×${scale}: ${label} unavailable (needs ${missing.join(', ')})`);
      return false;
    }
    return true;
  };
  /** Run a child task unless none of its phases may run or a dependency is missing. */
  const run = async (task, params, deps = [], extra = {}) => {
    const ids = TASK_PHASES[task];
    if (!admit(task, ids, deps)) return null;
    // A task that fills several phases is told which of them do not run here (an anchor above
    // --anchor-max-scale, a phase left out by --phases), so it does not measure them; they stay skipped.
    const skipPhases = ids.filter((id) => skipReason(id) != null);
    const started = Date.now();
    const outcome = await runChild(task, { ...params, phase_budget_ms: o.phaseBudgetMs, skip_phases: skipPhases }, { timeoutMs: o.timeoutMs, execArgv: profArgs(task), ...extra });
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    if (outcome.status !== 'ok') {
      for (const id of ids) {
        phases[id] = phaseRecord(defOf(id), outcome.status, outcome.reason);
        if (outcome.status === 'failed') phases[id].peak_rss_bytes = outcome.max_rss_bytes ?? null;
      }
      progress(`bench ×${scale}: ${task} ${outcome.status}: ${outcome.reason} (${secs} s)`);
      return null;
    }
    for (const id of ids) {
      const raw = outcome.result.phases?.[id];
      if (skipPhases.includes(id)) phases[id] = phaseRecord(defOf(id), 'skipped', skipReason(id));
      else if (raw) fillPhase(phases[id], raw, outcome.max_rss_bytes);
      else phases[id] = phaseRecord(defOf(id), 'failed', `task ${task} returned no ${id} figures`);
    }
    progress(`bench ×${scale}: ${task} ok (${secs} s)`);
    return outcome.result;
  };
  /**
   * Run a phase measured from this process against a server it starts (the MCP stdio phases): `fn`
   * returns the raw figures with the server's `peak_rss_bytes`; a throw is the phase's `failed` reason.
   */
  const runClient = async (id, deps, fn) => {
    if (!admit(id, [id], deps)) return null;
    const started = Date.now();
    try {
      const raw = await fn();
      fillPhase(phases[id], raw, raw.peak_rss_bytes ?? null);
      progress(`bench ×${scale}: ${id} ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      return raw;
    } catch (e) {
      phases[id] = phaseRecord(defOf(id), 'failed', e instanceof Error ? e.message : String(e));
      progress(`bench ×${scale}: ${id} failed: ${phases[id].reason}`);
      return null;
    }
  };

  const common = { root: vault.root, paths, runs: o.runs, distDir: o.dist, workDir: work };
  // Index and search against their anchors.
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
  // The chunk file feeds the anchors and peers; above --anchor-max-scale nothing reads it, and writing it
  // would make the search child materialise every chunk (its peak RSS would then be the file's, not search's).
  const chunksFile = comparative ? join(work, 'chunks.jsonl') : null;
  const sr = await run('search', { ...common, indexDir: ctx.indexDir, queries, nameQueries, chunksFile }, [hasIndex]);
  if (sr) {
    ctx.ltTop5 = sr.data.top5;
    ctx.ltLoc = sr.data.top5loc;
    ctx.ltNameLoc = sr.data.nameLoc;
  }
  const ps = await run('plain_search', { root: vault.root, paths, namespace: vault.namespace, runs: o.runs, queries, nameQueries, chunksFile: sr ? chunksFile : null });
  if (ps && ps.data.chunks_source === 'loretrace') ctx.plainTop5 = ps.data.top5;
  if (ps) {
    ctx.plainLoc = ps.data.top5loc;
    ctx.plainNameLoc = ps.data.nameLoc;
  }
  for (const peer of ['flexsearch_default_search', 'flexsearch_match_search']) {
    const r = await run(peer, { chunksFile, runs: o.runs, queries, nameQueries }, [['search (its chunks)', sr != null]]);
    if (r) ctx.peers[peer] = r.data;
  }
  await run('traversal', { ...common, indexDir: ctx.indexDir, queries: queries.slice(0, 10), iterations: o.traversalIterations }, [hasIndex]);

  // The proxy over HTTP and over MCP stdio, against the floors and the MCP filesystem server.
  await run(
    'proxy',
    { ...common, indexDir: ctx.indexDir, ledgerDir: join(work, 'proxy-ledger'), packetTemplate: o.packetTemplate },
    [hasIndex],
    { onReady: async (info) => Object.assign(ctx, { proxy: await runProxyClient(info, { namespace: vault.namespace, queries, reads, calls: o.proxyCalls, runs: o.runs, budgetMs: o.phaseBudgetMs }) }) },
  );
  await run('proxy_floor', { root: vault.root, reads: ctx.proxy?.admitted_reads ?? reads, calls: o.proxyCalls, runs: o.runs, workDir: work });
  settleProxyPhases(phases, ctx, defOf);
  const floorClient = {};
  await run('http_floor', { responses: ctx.proxy?.read_responses ?? [] }, [['proxy_lore_read', ctx.proxy?.read_responses != null]], {
    onReady: async (info) => {
      floorClient.raw = await runHttpFloorClient(info, { responses: ctx.proxy.read_responses, calls: o.proxyCalls, runs: o.runs, budgetMs: o.phaseBudgetMs });
    },
  });
  if (phases.http_floor.status === 'ok') {
    if (floorClient.raw) fillPhase(phases.http_floor, { ...floorClient.raw, extra: { ...phases.http_floor.extra, ...floorClient.raw.extra } }, phases.http_floor.peak_rss_bytes);
    else phases.http_floor = phaseRecord(defOf('http_floor'), 'failed', 'the HTTP client did not run');
  }
  const stdioRead = await runClient('proxy_stdio_lore_read', [hasIndex], () => measureStdioLoreRead({ o, vault, work, indexDir: ctx.indexDir, reads }));
  if (stdioRead) ctx.stdioReads = stdioRead.kept.map((i) => reads[i]);
  await runClient(
    'mcp_filesystem_read',
    [['@modelcontextprotocol/server-filesystem in node_modules (npm ci)', fsServer != null]],
    () => measureFilesystemServer({ o, vault, entry: /** @type {any} */ (fsServer).entry, reads: ctx.stdioReads ?? ctx.proxy?.admitted_reads ?? reads }),
  );

  // Re-indexing last: it edits files (restored afterwards).
  const rand = mulberry32(o.seed + 2);
  const order = sampleIndices(rand, paths.length, paths.length);
  const onePaths = [paths[order[0]]];
  const pctPaths = order.slice(1, 1 + Math.max(1, Math.ceil(paths.length / 100))).map((i) => paths[i]);
  await run('incremental', { ...common, indexDir: ctx.indexDir, onePaths, pctPaths }, [hasIndex]);

  for (const ext of EXTENSIONS) {
    await ext.run(run, {
      scale, root: vault.root, paths, namespace: vault.namespace, workDir: work, indexDir: ctx.indexDir, queries, nameQueries,
      common, distDir: o.dist, repo, reads: ctx.proxy?.admitted_reads ?? reads, packetTemplate: o.packetTemplate, options: o,
    });
  }

  const result = {
    scale,
    vault: { notes: vault.notes, note_bytes: vault.note_bytes, files: vault.files, bytes: vault.bytes, plain_chunks: ctx.plainChunks },
    duration_s: (Date.now() - t0) / 1000,
    phases: Object.fromEntries(PHASE_IDS.map((id) => [id, phases[id]])),
    ratios: computeRatios(phases),
    quality: {
      ...compareTop5(ctx.ltTop5, ctx.plainTop5),
      known_item_at_5: knownItemRate(sources, ctx.ltLoc),
      plain_known_item_at_5: knownItemRate(sources, ctx.plainLoc),
      name_lookup_at_5: knownItemRate(nameSources, ctx.ltNameLoc),
      plain_name_lookup_at_5: knownItemRate(nameSources, ctx.plainNameLoc),
      flexsearch_default_known_item_at_5: knownItemRate(sources, ctx.peers.flexsearch_default_search?.top5loc ?? null),
      flexsearch_default_name_lookup_at_5: knownItemRate(nameSources, ctx.peers.flexsearch_default_search?.nameLoc ?? null),
      flexsearch_match_known_item_at_5: knownItemRate(sources, ctx.peers.flexsearch_match_search?.top5loc ?? null),
      flexsearch_match_name_lookup_at_5: knownItemRate(nameSources, ctx.peers.flexsearch_match_search?.nameLoc ?? null),
    },
  };
  if (!o.keep) await rm(base, { recursive: true, force: true });
  return result;
}

/**
 * Merge the HTTP client's figures into the proxy phases (the server child gave their peak RSS and
 * session figures); a phase whose client failed becomes `failed` with the client's reason.
 */
function settleProxyPhases(phases, ctx, defOf) {
  for (const id of TASK_PHASES.proxy) {
    if (phases[id].status !== 'ok') continue;
    const raw = ctx.proxy?.[id];
    const serverExtra = phases[id].extra;
    if (!raw) phases[id] = { ...phaseRecord(defOf(id), 'failed', 'the HTTP client did not run'), peak_rss_bytes: phases[id].peak_rss_bytes };
    else if (raw.error) phases[id] = { ...phaseRecord(defOf(id), 'failed', raw.error), peak_rss_bytes: phases[id].peak_rss_bytes };
    else fillPhase(phases[id], { ...raw, extra: { ...serverExtra, ...raw.extra } }, phases[id].peak_rss_bytes);
  }
}

/**
 * `lore_read` over MCP stdio: the real `loretrace serve --mcp` of the measured build (loretrace-cli.mjs),
 * on the bench packet, its ledger fsync'ed per call as always, the persisted index of the cold phase;
 * the same sampled line ranges as over HTTP (the untimed pass drops those the session refuses).
 */
async function measureStdioLoreRead({ o, vault, work, indexDir, reads }) {
  const { packetPath } = await writeBenchPacket({ root: vault.root, packetTemplate: o.packetTemplate, workDir: work });
  const ledgerDir = join(work, 'stdio-ledger');
  await rm(ledgerDir, { recursive: true, force: true });
  await mkdir(ledgerDir, { recursive: true });
  const limits = Object.entries(BENCH_LIMIT_OVERRIDES).flatMap(([k, v]) => ['--limit', `${k}=${v}`]);
  const args = [
    join(HERE, 'loretrace-cli.mjs'), o.dist, 'serve', '--mcp', '--lore', vault.root, '--packet', packetPath,
    '--ledger', join(ledgerDir, 'ledger.jsonl'), '--index-dir', indexDir, ...limits,
  ];
  const items = reads.map((rd) => ({ ref: `${vault.namespace}:${rd.ref_path}#L${rd.line_start}-L${rd.line_end}` }));
  return runMcpStdio({ command: process.execPath, args, env: stdioEnv() }, { tool: 'lore_read', items, dropRefused: true, calls: o.proxyCalls, runs: o.runs, budgetMs: o.phaseBudgetMs });
}

/**
 * The MCP filesystem server (npm `@modelcontextprotocol/server-filesystem`, pinned), started over stdio
 * with the scaled vault as its one allowed directory: `read_text_file` of the same notes, whole (the
 * server reads whole files or a head/tail, not a line range).
 */
async function measureFilesystemServer({ o, vault, entry, reads }) {
  const items = reads.map((rd) => ({ path: join(vault.root, ...rd.path.split('/')) }));
  return runMcpStdio({ command: process.execPath, args: [entry, vault.root], env: stdioEnv() }, { tool: 'read_text_file', items, dropRefused: false, calls: o.proxyCalls, runs: o.runs, budgetMs: o.phaseBudgetMs });
}

/** The environment of a stdio server: this process's, as strings (the SDK otherwise passes a small default set). */
function stdioEnv() {
  return Object.fromEntries(Object.entries(process.env).filter(([, v]) => typeof v === 'string'));
}

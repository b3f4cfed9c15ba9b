/**
 * Phase tasks, each run inside its own `node --expose-gc` child (scripts/bench/child.mjs) so that the
 * child's `process.resourceUsage().maxRSS` is that phase's honest peak. Every task takes plain JSON
 * params and returns plain JSON:
 *
 *   { phases: { <phase_id>: { samples_ms?, p50_ms?, p99_ms?, calls_per_s?, extra? } }, data? }
 *
 * `samples_ms` are per-run wall times (performance.now) in milliseconds; latency phases give the
 * per-run p50/p99 lists instead. Nothing is asserted here; the orchestrator turns them into medians
 * and ratios.
 */
import { readFile, writeFile, rm, readdir, stat, mkdir } from 'node:fs/promises';
import { createServer } from 'node:http';
import { createWriteStream, readFileSync, openSync, writeSync, fsyncSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { makeProcessor, decode, runPlainPipeline, newPlainMiniSearch, PLAIN_MINISEARCH_OPTIONS, splitLinesPlain, headingChunks } from './plain.mjs';
import { now, gc, runIndices, setPhaseBudget, latencyRuns, readChunkDocs } from './task-kit.mjs';
import { requireApi, indexWith, Unavailable } from './loretrace.mjs';
import { editFiles, restoreFiles } from './vault.mjs';
import { writeBenchPacket, BENCH_LIMIT_OVERRIDES } from './proxy-packet.mjs';
import { PEER_TASKS } from './peers.mjs';

const abs = (root, rel) => join(root, ...rel.split('/'));

export { setPhaseBudget };

/** Total size in bytes of every file under `dir`. */
async function dirBytes(dir) {
  let total = 0;
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) total += (await stat(join(e.parentPath ?? e.path, e.name))).size;
  }
  return total;
}

/** (a) Read-only floor: read every note's bytes, sequentially. */
async function readFloor({ root, paths, runs }) {
  const samples = [];
  let bytes = 0;
  for (const r of runIndices(runs)) {
    gc();
    const t0 = now();
    bytes = 0;
    for (const rel of paths) bytes += readFileSync(abs(root, rel)).length;
    samples.push(now() - t0);
  }
  return { phases: { read_floor: { samples_ms: samples, extra: { bytes } } } };
}

/** (b) Single-threaded remark parse (remark-parse + gfm + frontmatter) of the same files, bytes pre-read. */
async function remarkParse({ root, paths, runs }) {
  const files = [];
  for (const rel of paths) files.push(readFileSync(abs(root, rel)));
  const processor = makeProcessor();
  const samples = [];
  for (const r of runIndices(runs)) {
    gc();
    const t0 = now();
    for (const bytes of files) processor.parse(decode(bytes));
    samples.push(now() - t0);
  }
  return { phases: { remark_parse: { samples_ms: samples } } };
}

/** (c) Plain pipeline: read + remark + heading chunks + MiniSearch defaults + JSON save. */
async function plainPipeline({ root, paths, runs, plainFile }) {
  const samples = [];
  let last = null;
  for (const r of runIndices(runs)) {
    gc();
    const t0 = now();
    last = await runPlainPipeline(root, paths, plainFile);
    samples.push(now() - t0);
  }
  return { phases: { plain_pipeline: { samples_ms: samples, extra: last } } };
}

/** Cold index: `indexVault` into a fresh, empty index folder each run; the last run's folder is kept. */
async function coldIndex({ root, runs, workDir, distDir }) {
  const api = await requireApi(distDir, ['indexVault']);
  const samples = [];
  let index = null;
  let dir = '';
  for (const r of runIndices(runs)) {
    if (dir) await rm(dir, { recursive: true, force: true });
    index = null;
    gc();
    dir = join(workDir, `lt-index-cold-${r}`);
    await mkdir(dir, { recursive: true });
    const t0 = now();
    index = await indexWith(api, root, dir);
    samples.push(now() - t0);
  }
  // Counts come from indexStats, which reads plain counters: touching index.links or index.findings would
  // load the lazy records and run vault-wide link resolution inside this child, and the phase's peak RSS
  // would then measure resolution too, not indexing (resolution is paid by the first command that reads links).
  const stats = typeof api.indexStats === 'function' ? api.indexStats(index) : null;
  const extra = {
    notes: stats?.notes ?? null,
    chunks: stats?.chunks ?? null,
    links: stats?.links ?? null,
    persisted_bytes: await dirBytes(dir),
  };
  return { phases: { cold_index: { samples_ms: samples, extra } }, data: { index_dir: dir } };
}

/** Warm start: load the persisted index (indexVault on an unchanged vault) + the first query. */
async function warmStart({ root, indexDir, runs, query, distDir }) {
  const api = await requireApi(distDir, ['indexVault', 'search']);
  const samples = [];
  const load = [];
  for (const r of runIndices(runs)) {
    gc();
    const t0 = now();
    const index = await indexWith(api, root, indexDir);
    const t1 = now();
    api.search(index, query, { k: 5 });
    const t2 = now();
    samples.push(t2 - t0);
    load.push(t1 - t0);
  }
  return { phases: { warm_start: { samples_ms: samples, extra: { load_ms: load } } } };
}

/** Plain warm start: read the saved JSON + `MiniSearch.loadJSON` + the first query. */
async function plainWarmStart({ plainFile, runs, query }) {
  const samples = [];
  for (const r of runIndices(runs)) {
    gc();
    const t0 = now();
    const ms = MiniSearch.loadJSON(readFileSync(plainFile, 'utf8'), PLAIN_MINISEARCH_OPTIONS);
    ms.search(query);
    samples.push(now() - t0);
  }
  return { phases: { plain_warm_start: { samples_ms: samples } } };
}

/**
 * loretrace search: p50/p99 over the query set (one untimed warm-up query first). Also writes the
 * index's chunks as JSON lines for the plain search anchor and the peers (when `chunksFile` is given), and
 * returns the top-5 refs of run 0 and the top hit of the first queries.
 */
async function searchPhase({ root, indexDir, runs, queries, nameQueries = [], chunksFile, distDir }) {
  const api = await requireApi(distDir, ['indexVault', 'search']);
  const index = await indexWith(api, root, indexDir);
  const ns = index.namespace;
  if (chunksFile) await writeChunkDocs(index, chunksFile);
  // Counts from indexStats (plain counters), so that without the chunk file no chunk record is materialised.
  const stats = typeof api.indexStats === 'function' ? api.indexStats(index) : null;
  api.search(index, queries[0], { k: 5 });
  const perRun = [];
  const top5 = [];
  const top5loc = [];
  const hits = [];
  for (const r of runIndices(runs)) {
    gc();
    const samples = [];
    for (const q of queries) {
      const t0 = now();
      const res = api.search(index, q, { k: 5 });
      samples.push(now() - t0);
      if (r === 0) {
        top5.push(res.slice(0, 5).map((h) => h.ref));
        top5loc.push(res.slice(0, 5).map((h) => ({ path: h.path, line_start: h.line_start, line_end: h.line_end })));
        if (res[0]) hits.push({ ref: res[0].ref, path: res[0].path, line_start: res[0].line_start, line_end: res[0].line_end });
      }
    }
    perRun.push(samples);
  }
  return {
    phases: { search: { ...latencyRuns(perRun), extra: { chunks: chunksFile ? index.chunks.length : stats?.chunks ?? null, k: 5 } } },
    // Note-name lookups (untimed, after the timed runs): top-5 locations for the quality figures.
    data: {
      top5, top5loc, hits, namespace: ns,
      nameLoc: nameQueries.map((q) => api.search(index, q, { k: 5 }).map((h) => ({ path: h.path, line_start: h.line_start, line_end: h.line_end }))),
    },
  };
}

/** Write the index's chunks as JSON lines `{ id: ref, path, line_start, line_end, text }` (task-kit's readChunkDocs reads them). */
async function writeChunkDocs(index, file) {
  const ns = index.namespace;
  const out = createWriteStream(file);
  for (const c of index.chunks) {
    const doc = { id: `${ns}:${c.path}#chunk${c.chunk_index}`, path: c.path, line_start: c.line_start, line_end: c.line_end, text: c.text };
    if (!out.write(JSON.stringify(doc) + '\n')) {
      await new Promise((res) => out.once('drain', res));
    }
  }
  await new Promise((res, rej) => out.end((e) => (e ? rej(e) : res())));
}

/** Plain search anchor: MiniSearch defaults over the same chunks, `search(q)` scoring every match. */
async function plainSearch({ chunksFile, root, paths, namespace, runs, queries, nameQueries = [] }) {
  let docs;
  let chunksSource = 'loretrace';
  if (chunksFile) {
    docs = await readChunkDocs(chunksFile);
  } else {
    // loretrace's search did not run: fall back to the plain pipeline's heading chunks (drift is then not comparable).
    chunksSource = 'plain_heading_chunks';
    docs = [];
    const processor = makeProcessor();
    for (const rel of paths) {
      const text = decode(await readFile(abs(root, rel)));
      for (const c of headingChunks(rel, text, processor.parse(text))) docs.push({ id: `${namespace}:${c.id.normalize('NFC')}`, path: c.path.normalize('NFC'), line_start: c.line_start, line_end: c.line_end, text: c.text });
    }
  }
  const locs = new Map(docs.map((d) => [d.id, { path: d.path, line_start: d.line_start, line_end: d.line_end }]));
  const b0 = now();
  const ms = newPlainMiniSearch();
  ms.addAll(docs.map((d) => ({ id: d.id, text: d.text })));
  const buildMs = now() - b0;
  ms.search(queries[0]);
  const perRun = [];
  const top5 = [];
  const top5loc = [];
  const matches = [];
  for (const r of runIndices(runs)) {
    gc();
    const samples = [];
    for (const q of queries) {
      const t0 = now();
      const res = ms.search(q);
      samples.push(now() - t0);
      if (r === 0) {
        top5.push(res.slice(0, 5).map((h) => h.id));
        top5loc.push(res.slice(0, 5).map((h) => locs.get(h.id)));
        matches.push(res.length);
      }
    }
    perRun.push(samples);
  }
  const meanMatches = matches.reduce((a, b) => a + b, 0) / Math.max(1, matches.length);
  return {
    phases: { plain_search: { ...latencyRuns(perRun), extra: { chunks: docs.length, chunks_source: chunksSource, build_ms: buildMs, mean_matching_chunks: meanMatches } } },
    data: { top5, top5loc, chunks_source: chunksSource, nameLoc: nameQueries.map((q) => ms.search(q).slice(0, 5).map((h) => locs.get(h.id))) },
  };
}

/**
 * Traversal: compilePolicy once, then `iterations` traversals per run of a depth-2 policy from the
 * seed note that follows every wikilink inside the seed's copy, stopped by `max_refs:12` (D's structured
 * stop token), cycling through `queries`.
 */
async function traversal({ root, indexDir, runs, iterations, queries, seedPath, distDir }) {
  const api = await requireApi(distDir, ['indexVault', 'compilePolicy', 'traverse']);
  const index = await indexWith(api, root, indexDir);
  const ns = index.namespace;
  const seed = seedPath ?? pickSeedNote(index);
  if (!seed) throw new Unavailable('no note with resolved outgoing links to use as the traversal seed');
  const policy = {
    max_link_depth: 2,
    allowed_prefixes: [`${ns}:${seed.split('/')[0]}/`],
    required_seed_refs: [`${ns}:${seed}`],
    follow_link_classes: ['wikilink'],
    stop_conditions: ['max_refs:12'],
  };
  const compiled = api.compilePolicy(policy, { index });
  const run = (q) => api.traverse(index, compiled, { queries: [q] });
  const first = run(queries[0]);
  const perRun = [];
  for (const r of runIndices(runs)) {
    gc();
    const samples = [];
    for (let i = 0; i < iterations; i++) {
      const t0 = now();
      run(queries[i % queries.length]);
      samples.push(now() - t0);
    }
    perRun.push(samples);
  }
  const extra = {
    seed_ref: `${ns}:${seed}`,
    iterations,
    consulted_refs: first?.consulted_refs?.length ?? null,
    followed_refs: first?.followed_refs?.length ?? null,
    source_excerpts: first?.source_excerpts?.length ?? null,
  };
  return { phases: { traversal: { ...latencyRuns(perRun), extra } } };
}

/**
 * The note of the first copy with the most outgoing links that lead to a note (resolved, ambiguous or
 * broken-fragment: what the policy's edgeTarget follows), ties by path code-unit order. Counted per
 * source note, so the same note is picked at every scale (copies only add ambiguity, not links).
 */
export function pickSeedNote(index) {
  const counts = new Map();
  const leads = new Set(['resolved', 'ambiguous', 'broken_fragment']);
  for (const l of index.links ?? []) {
    if (!leads.has(l.resolution?.status) || l.resolution.path === l.source_path) continue;
    counts.set(l.source_path, (counts.get(l.source_path) ?? 0) + 1);
  }
  const firstCopy = index.notes?.[0]?.path.split('/')[0];
  let best = null;
  let bestN = 0;
  for (const [path, n] of [...counts].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    if (firstCopy && !path.startsWith(firstCopy + '/')) continue;
    if (n > bestN) {
      best = path;
      bestN = n;
    }
  }
  return best;
}

/**
 * Proxy floor: for each read, read the file, slice the same line range, and append one fsync'd line
 * to a ledger file — the least any recorded `lore_read` must do (synchronous calls: the cheapest form). Per-call latency p50/p99, calls/s.
 */
async function proxyFloor({ root, reads, calls, runs, workDir }) {
  const ledger = join(workDir, 'floor-ledger.jsonl');
  const fd = openSync(ledger, 'a');
  const perRun = [];
  const rates = [];
  try {
    for (const r of runIndices(runs)) {
      gc();
      const samples = [];
      const t0 = now();
      for (let i = 0; i < calls; i++) {
        const rd = reads[i % reads.length];
        const c0 = now();
        const lines = splitLinesPlain(decode(readFileSync(abs(root, rd.path))));
        const text = lines.slice(rd.line_start - 1, rd.line_end).join('\n');
        writeSync(fd, JSON.stringify({ run: r, seq: i, path: rd.path, line_start: rd.line_start, line_end: rd.line_end, chars: text.length }) + '\n');
        fsyncSync(fd);
        samples.push(now() - c0);
      }
      rates.push((calls * 1000) / (now() - t0));
      perRun.push(samples);
    }
  } finally {
    closeSync(fd);
  }
  return { phases: { proxy_floor: { ...latencyRuns(perRun), calls_per_s: rates, extra: { calls } } } };
}

/**
 * Incremental re-index: after an untimed warm-up call, each run edits 1 file (then 1% of files) with
 * a run-specific suffix and times `indexVault` on the persisted index. Files are restored at the end.
 */
async function incremental({ root, indexDir, runs, onePaths, pctPaths, distDir }) {
  const api = await requireApi(distDir, ['indexVault']);
  await indexWith(api, root, indexDir);
  const originals = new Map();
  const one = [];
  const pct = [];
  try {
    for (const r of runIndices(runs)) {
      gc();
      await editFiles(root, onePaths, r + 1, originals);
      let t0 = now();
      await indexWith(api, root, indexDir);
      one.push(now() - t0);
      gc();
      await editFiles(root, pctPaths, r + 1, originals);
      t0 = now();
      await indexWith(api, root, indexDir);
      pct.push(now() - t0);
    }
  } finally {
    await restoreFiles(root, originals);
  }
  return {
    phases: {
      incremental_1_file: { samples_ms: one, extra: { files_changed: onePaths.length } },
      incremental_1_percent: { samples_ms: pct, extra: { files_changed: pctPaths.length } },
    },
  };
}

/**
 * Proxy server child: opens one research session the way `loretrace serve` does (`openProxySession`:
 * packet validated, vault indexed warm from the persisted index, policy compiled, ledger created) over
 * the bench packet (proxy-packet.mjs), starts loretrace's HTTP transport on 127.0.0.1 (`startHttpServer`),
 * reports { url, searchPath, readPath } and waits until the orchestrator's client (proxy-client.mjs) is
 * done. The latency figures come from the client; this child contributes the server's peak RSS.
 */
async function proxy({ root, indexDir, ledgerDir, distDir, packetTemplate, workDir }, channel) {
  const api = await requireApi(distDir, ['indexVault', 'openProxySession', 'startHttpServer']);
  const { packetPath, scopeNotes } = await writeBenchPacket({ root, packetTemplate, workDir });
  await rm(ledgerDir, { recursive: true, force: true });
  await mkdir(ledgerDir, { recursive: true });
  const limits = { ...api.DEFAULT_LIMITS, ...BENCH_LIMIT_OVERRIDES };
  const t0 = now();
  const session = await api.openProxySession({
    lore: root, packetPath, ledgerPath: join(ledgerDir, 'ledger.jsonl'), limits, indexOptions: { indexDir },
  });
  const openMs = now() - t0;
  const server = await api.startHttpServer(session);
  channel.ready({ url: server.url, searchPath: '/tools/lore_search', readPath: '/tools/lore_read' });
  await channel.stopped;
  await server.close();
  if (typeof session.close === 'function') await session.close();
  const extra = { session_open_ms: openMs, scope_notes: scopeNotes, ledger_bytes: await dirBytes(ledgerDir) };
  return { phases: { proxy_lore_search: { extra }, proxy_lore_read: { extra } } };
}

/**
 * Bare HTTP floor: a `node:http` server on 127.0.0.1 that answers each POST with the exact response bytes
 * loretrace's `lore_read` gave for the same request body (recorded by the HTTP client's warm-up pass) —
 * no routing framework, no validation, no file read, no ledger. With the read-and-fsync floor it is the
 * least an HTTP `lore_read` can cost on this machine.
 */
async function httpFloor({ responses }, channel) {
  const byBody = new Map(responses.map((r) => [r.request, r.response]));
  const server = createServer((req, res) => {
    const parts = [];
    req.on('data', (d) => parts.push(d));
    req.on('end', () => {
      const body = byBody.get(Buffer.concat(parts).toString('utf8'));
      if (body === undefined) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise((res) => server.listen(0, '127.0.0.1', res));
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  channel.ready({ url: `http://127.0.0.1:${port}`, readPath: '/read' });
  await channel.stopped;
  await new Promise((res) => server.close(res));
  return { phases: { http_floor: { extra: { responses: responses.length } } } };
}

/** Task table: name → async (params) => result. */
export const TASKS = {
  read_floor: readFloor,
  remark_parse: remarkParse,
  plain_pipeline: plainPipeline,
  cold_index: coldIndex,
  warm_start: warmStart,
  plain_warm_start: plainWarmStart,
  search: searchPhase,
  plain_search: plainSearch,
  traversal,
  proxy_floor: proxyFloor,
  proxy,
  http_floor: httpFloor,
  incremental,
  ...PEER_TASKS,
};

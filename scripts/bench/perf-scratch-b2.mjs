#!/usr/bin/env node
// B2's scratch measurement script (deleted at the end unless H wants it).
// usage: node scripts/bench/perf-scratch-b2.mjs <phase> [scale=100]
//   phases: vault | plain | cold | warm | plainwarm | search | plainsearch | incr | all
// Builds /tmp/lt-b2/x<scale>/AetheriaLore once. Each phase runs in this process; run one phase per process for RSS.
import { existsSync, readFileSync, writeFileSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import MiniSearch from 'minisearch';
import { Session } from 'node:inspector/promises';
import { buildScaledVault, listFiles, editFiles, restoreFiles } from './vault.mjs';
import { runPlainPipeline, PLAIN_MINISEARCH_OPTIONS, newPlainMiniSearch } from './plain.mjs';
import { collectSentences, generateQueries } from './queries.mjs';
import { percentile } from './stats.mjs';

const phase = process.argv[2] ?? 'all';
const scale = Number(process.argv[3] ?? 100);
const SRC = '/work/shared/lore/AetheriaLore';
const base = `/tmp/lt-b2/x${scale}`;
const root = join(base, 'AetheriaLore');
const work = join(base, 'work');
mkdirSync(work, { recursive: true });
const dist = process.env.DIST ?? '/work/main/dist';
const rss = () => (process.resourceUsage().maxRSS / 1024).toFixed(0) + ' MB';
const now = () => performance.now();
const cpu0 = process.cpuUsage();
const log = (...a) => { const c = process.cpuUsage(cpu0); console.log(`[${phase} x${scale}]`, ...a, `cpu ${((c.user + c.system) / 1000).toFixed(0)} ms (process so far)`); };

if (!existsSync(join(root, 'c000'))) {
  const t0 = now();
  await buildScaledVault(SRC, base, scale);
  log('built vault', (now() - t0).toFixed(0), 'ms');
}
const paths = await listFiles(root);
const queries = generateQueries(await collectSentences(SRC, await listFiles(SRC)), 200, 7);
const api = phase === 'plain' || phase === 'plainwarm' || phase === 'plainsearch' || phase === 'vault' ? null : await import(join(dist, 'index.js'));
const ltDir = join(work, 'lt-index');
let mark = null;
const cpuMark = () => { mark = process.cpuUsage(); };
const cpuSince = () => { const c = process.cpuUsage(mark); return `phase cpu ${((c.user + c.system) / 1000).toFixed(0)} ms`; };
let session = null;
if (process.env.PROF) {
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
process.on('beforeExit', async () => {
  if (!session) return;
  const { profile } = await session.post('Profiler.stop');
  mkdirSync(process.env.PROF, { recursive: true });
  writeFileSync(join(process.env.PROF, `${phase}.cpuprofile`), JSON.stringify(profile));
  session = null;
});
const plainFile = join(work, 'plain.json');

if (phase === 'plain') {
  cpuMark();
  const t0 = now();
  const r = await runPlainPipeline(root, paths, plainFile);
  log('plain pipeline', (now() - t0).toFixed(0), 'ms', cpuSince(), JSON.stringify(r), 'maxRSS', rss());
}
if (phase === 'cold') {
  rmSync(ltDir, { recursive: true, force: true });
  cpuMark();
  const t0 = now();
  const index = await api.indexVault(root, { indexDir: ltDir, workers: process.env.WORKERS === '0' ? false : 'auto' });
  const wall = (now() - t0).toFixed(0);
  const c = cpuSince();
  const rssCold = rss();
  log('cold index', wall, 'ms', c, 'maxRSS before reading links', rssCold, JSON.stringify(api.indexStats(index)), 'maxRSS', rss());
}
if (phase === 'warm') {
  const t0 = now();
  const index = await api.indexVault(root, { indexDir: ltDir });
  const t1 = now();
  api.search(index, queries[0], { k: 5 });
  log('warm start', (now() - t0).toFixed(0), 'ms (load', (t1 - t0).toFixed(0), ')', 'maxRSS', rss());
}
if (phase === 'plainwarm') {
  const t0 = now();
  const ms = MiniSearch.loadJSON(readFileSync(plainFile, 'utf8'), PLAIN_MINISEARCH_OPTIONS);
  ms.search(queries[0]);
  log('plain warm', (now() - t0).toFixed(0), 'ms', 'maxRSS', rss());
}
if (phase === 'search' || phase === 'plainsearch') {
  const index = await api?.indexVault(root, { indexDir: ltDir });
  const chunksFile = join(work, 'chunks.jsonl');
  if (phase === 'search') {
    writeFileSync(chunksFile, index.chunks.map((c) => JSON.stringify({ id: `${index.namespace}:${c.path}#chunk${c.chunk_index}`, text: c.text })).join('\n') + '\n');
  }
  let run;
  if (phase === 'search') run = (q) => api.search(index, q, { k: 5 }).map((h) => h.ref);
  else {
    const docs = readFileSync(chunksFile, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
    const ms = newPlainMiniSearch();
    ms.addAll(docs);
    run = (q) => ms.search(q).slice(0, 5).map((h) => h.id);
  }
  run(queries[0]);
  const samples = [];
  const top5 = [];
  for (let rep = 0; rep < 2; rep++) for (const q of queries) {
    const t0 = now();
    const r = run(q);
    samples.push(now() - t0);
    if (rep === 0) top5.push(r);
  }
  writeFileSync(join(work, `${phase}-top5.json`), JSON.stringify(top5));
  log('p50', percentile(samples, 50).toFixed(2), 'p99', percentile(samples, 99).toFixed(2), 'maxRSS', rss());
  const other = join(work, `${phase === 'search' ? 'plainsearch' : 'search'}-top5.json`);
  if (existsSync(other)) {
    const o = JSON.parse(readFileSync(other, 'utf8'));
    let diff = 0, overlap = 0;
    const strip = (r) => r.replace(/^[^:]+:c\d+\//, '');
    let diffNoCopy = 0;
    for (let i = 0; i < top5.length; i++) {
      const a = new Set(top5[i]);
      const b = o[i];
      const common = b.filter((x) => a.has(x)).length;
      if (common !== b.length || a.size !== b.length) diff++;
      overlap += b.length ? common / b.length : 1;
      const a2 = new Set(top5[i].map(strip)); const b2 = new Set(b.map(strip));
      if ([...a2].sort().join() !== [...b2].sort().join()) diffNoCopy++;
    }
    log('top5 set drift', (diff / top5.length).toFixed(3), 'overlap', (overlap / top5.length).toFixed(3), 'drift ignoring copy prefix', (diffNoCopy / top5.length).toFixed(3));
  }
}
if (phase === 'incr') {
  await api.indexVault(root, { indexDir: ltDir });
  const originals = new Map();
  const one = [paths[1234 % paths.length]];
  try {
    for (let r = 1; r <= 3; r++) {
      await editFiles(root, one, r, originals);
      const t0 = now();
      const index = await api.indexVault(root, { indexDir: ltDir });
      const ms = now() - t0; const st = api.indexStats(index); log('incremental 1 file', ms.toFixed(0), 'ms', JSON.stringify({ parsed: st.parsed, reused: st.reused, threads: st.threads }));
    }
  } finally {
    await restoreFiles(root, originals);
  }
  const t0 = now();
  await api.indexVault(root, { indexDir: ltDir });
  log('restore re-index', (now() - t0).toFixed(0), 'ms', 'maxRSS', rss());
}

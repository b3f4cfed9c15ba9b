/**
 * Markdown rendering of a bench-results object (pure: results in, string out). The same text goes to
 * stdout and to `bench-results.md`.
 */
import { PHASES, RATIOS, TARGET_SCALE } from './phases.mjs';

const pct = (x) => (x == null ? '—' : `${(x * 100).toFixed(1)}%`);

/** Milliseconds for humans: `0.042 ms`, `3.41 ms`, `512 ms`, `12.3 s`. @param {number | null} ms */
export function fmtMs(ms) {
  if (ms == null) return '—';
  if (ms >= 10_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms >= 100) return `${Math.round(ms)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  return `${ms.toFixed(3)} ms`;
}

/** Bytes for humans in MiB (1 decimal). @param {number | null} b */
export function fmtMiB(b) {
  return b == null ? '—' : `${(b / 1048576).toFixed(1)} MiB`;
}

/** A ratio with 3 significant decimals, `—` when absent. @param {number | null} x */
export function fmtRatio(x) {
  if (x == null) return '—';
  return x >= 10 ? x.toFixed(1) : x >= 0.1 ? x.toFixed(2) : x.toFixed(4);
}

/** Integer with thousands separators (fixed `,`, no locale). @param {number} n */
function fmtInt(n) {
  return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

/** `✅ met` / `❌ missed` / `—`. @param {boolean | null} met */
function fmtMet(met) {
  return met === true ? 'met' : met === false ? '**missed**' : '—';
}

/** Escape `|` in table cells. @param {string} s */
function cell(s) {
  return String(s).replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/**
 * Render the whole report.
 * @param {any} results a bench-results object (schemas/bench-results.schema.json)
 * @returns {string}
 */
export function renderMarkdown(results) {
  const m = results.machine;
  const p = results.params;
  const out = [];
  out.push(`# loretrace benchmark: ${p.namespace} ×${p.scales.join(', ×')}`);
  out.push('');
  out.push(
    `Machine: ${m.nproc} × ${m.cpu_model}, ${(m.total_memory_bytes / 2 ** 30).toFixed(1)} GiB RAM, Node ${m.node_version}, ${m.platform} ${m.arch}. ` +
      `Up to ${p.runs} runs per phase, no new run after ${p.phase_budget_s} s (medians of runs; latencies are nearest-rank p50/p99 per run, median over runs). ` +
      `Queries: ${results.queries.count} (${results.queries.unique} distinct, seed ${p.seed}, sha256 ${results.queries.sha256.slice(0, 12)}…).`,
  );
  out.push('');
  out.push(`Reproduce: \`${results.command}\``);
  const peers = results.peers;
  out.push('');
  out.push(
    `Peers: FlexSearch ${peers.flexsearch ?? 'not installed'}, MCP filesystem server ${peers.mcp_filesystem_server ?? 'not installed'}, MiniSearch ${peers.minisearch ?? 'not installed'}` +
      (p.anchor_max_scale != null ? `; anchors and peers run up to ×${p.anchor_max_scale}.` : '.'),
  );
  for (const s of results.scales) {
    out.push('');
    out.push(
      `## ×${s.scale}: ${fmtInt(s.vault.notes)} notes, ${(s.vault.note_bytes / 1e6).toFixed(1)} MB` +
        (s.vault.plain_chunks != null ? `, ${fmtInt(s.vault.plain_chunks)} heading chunks` : '') +
        ` (${s.duration_s.toFixed(0)} s wall)`,
    );
    out.push('');
    out.push('| Phase | Kind | Status | Runs | Median | p50 | p99 | Calls/s | Peak RSS |');
    out.push('| --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |');
    for (const def of PHASES) {
      const ph = s.phases[def.id];
      const status = ph.status === 'ok' ? 'ok' : `${ph.status}: ${ph.reason ?? ''}`;
      out.push(
        `| ${cell(def.label)} | ${ph.kind} | ${cell(status)} | ${ph.runs} | ${fmtMs(ph.median_ms)} | ${fmtMs(ph.p50_ms)} | ${fmtMs(ph.p99_ms)} | ` +
          `${ph.calls_per_s == null ? '—' : ph.calls_per_s.toFixed(0)} | ${fmtMiB(ph.peak_rss_bytes)} |`,
      );
    }
    out.push('');
    out.push('| Ratio | Value | Target (at ×100) | Met here |');
    out.push('| --- | ---: | ---: | --- |');
    for (const def of RATIOS) {
      const r = s.ratios[def.id];
      const den = r.denominator.includes(' + ') ? `(${r.denominator})` : r.denominator;
      out.push(`| ${def.id} (${r.numerator} / ${den}) | ${fmtRatio(r.value)} | ${r.target == null ? '—' : `≤ ${r.target}`} | ${fmtMet(r.met)} |`);
    }
    const q = s.quality;
    out.push('');
    out.push(
      q.queries_compared > 0
        ? `Quality vs plain BM25 (${q.queries_compared} queries): top-5 set differs for ${(q.top5_set_drift * 100).toFixed(1)}%, ` +
            `ordered top-5 differs for ${(q.top5_order_drift * 100).toFixed(1)}%, mean top-5 overlap ${(q.mean_top5_overlap * 100).toFixed(1)}%.`
        : 'Quality vs plain BM25: not measured (a search phase did not run).',
    );
    out.push('');
    out.push(
      `Known-item hit rate at 5 (a top-5 hit inside the paragraph the query was cut from): loretrace ${pct(q.known_item_at_5)}, plain MiniSearch ${pct(q.plain_known_item_at_5)}, ` +
        `FlexSearch default ${pct(q.flexsearch_default_known_item_at_5)}, FlexSearch match ${pct(q.flexsearch_match_known_item_at_5)}.`,
    );
    out.push('');
    out.push(
      `Note-name lookups at 5 (the name of a note as the query; a top-5 hit in that note): loretrace ${pct(q.name_lookup_at_5)}, plain MiniSearch ${pct(q.plain_name_lookup_at_5)}, ` +
        `FlexSearch default ${pct(q.flexsearch_default_name_lookup_at_5)}, FlexSearch match ${pct(q.flexsearch_match_name_lookup_at_5)}.`,
    );
  }
  out.push('');
  out.push(`## Targets (defined at ×${TARGET_SCALE})`);
  out.push('');
  if (results.targets.length === 0) {
    out.push('No target ratios could be computed in this run.');
  } else {
    out.push('| Ratio | Target | Scale | Value | Met |');
    out.push('| --- | ---: | ---: | ---: | --- |');
    for (const t of results.targets) {
      const note = t.scale === TARGET_SCALE ? '' : ` (×${TARGET_SCALE} not run)`;
      out.push(`| ${t.ratio} | ≤ ${t.target} | ×${t.scale}${note} | ${fmtRatio(t.value)} | ${fmtMet(t.met)} |`);
    }
    if (results.targets.some((t) => t.scale !== TARGET_SCALE)) {
      out.push('');
      out.push(
        `The targets are defined at ×${TARGET_SCALE}. At smaller scales fixed costs (worker start-up, one HTTP round trip, ` +
          'loading the index) dominate and the ratios are not comparable; the top-5 drift is also higher there, because ' +
          `with fewer copies of each note fewer tied copies fill the top 5. Run \`npm run bench\` (×1, ×10, ×${TARGET_SCALE}) for the real figures.`,
      );
    }
  }
  out.push(...renderGrowth(results));
  out.push('');
  return out.join('\n');
}

/** The phase's main figure at one scale: the median (time phases) or `p50 / p99` (latency phases). */
function mainFigure(def, ph) {
  if (!ph || ph.status !== 'ok') return ph?.status === 'skipped' ? 'skipped' : ph ? ph.status : '—';
  return def.stat === 'time' ? fmtMs(ph.median_ms) : `${fmtMs(ph.p50_ms)} / ${fmtMs(ph.p99_ms)}`;
}

/**
 * Growth over the scales run (when more than one): every phase's main figure and peak RSS per scale,
 * then the cross-scale checks.
 * @param {any} results
 * @returns {string[]}
 */
export function renderGrowth(results) {
  const out = [];
  const scales = results.scales;
  if (scales.length > 1) {
    out.push('');
    out.push(`## Growth ×${scales.map((s) => s.scale).join(' → ×')} (plot: bench-growth.svg)`);
    out.push('');
    out.push(`| Phase | Stat | ${scales.map((s) => `×${s.scale}`).join(' | ')} |`);
    out.push(`| --- | --- | ${scales.map(() => '---:').join(' | ')} |`);
    for (const def of PHASES) {
      out.push(`| ${def.id} | ${def.stat === 'time' ? 'median' : 'p50 / p99'} | ${scales.map((s) => mainFigure(def, s.phases[def.id])).join(' | ')} |`);
    }
    out.push('');
    out.push(`| Phase | Peak RSS ${scales.map((s) => `×${s.scale}`).join(' | ')} |`);
    out.push(`| --- | ${scales.map(() => '---:').join(' | ')} |`);
    for (const def of PHASES) {
      out.push(`| ${def.id} | ${scales.map((s) => (s.phases[def.id]?.status === 'ok' ? fmtMiB(s.phases[def.id].peak_rss_bytes) : '—')).join(' | ')} |`);
    }
  }
  out.push('');
  out.push('## Checks across scales');
  out.push('');
  out.push('| Check | Value | Bound | Met |');
  out.push('| --- | ---: | ---: | --- |');
  for (const c of results.scale_checks) {
    const value = c.value == null ? `— (×${c.scale}${c.base_scale != null ? ` or ×${c.base_scale}` : ''} not run)` : c.stat === 'peak_rss_bytes' && c.kind === 'bound' ? fmtMiB(c.value) : fmtRatio(c.value);
    const bound = c.stat === 'peak_rss_bytes' && c.kind === 'bound' ? `≤ ${fmtMiB(c.target)}` : `≤ ${c.target}`;
    out.push(`| ${c.id} (${c.phase}.${c.stat}${c.kind === 'growth' ? ` ×${c.scale} / ×${c.base_scale}` : ` at ×${c.scale}`}) | ${value} | ${bound} | ${fmtMet(c.met)} |`);
  }
  return out;
}

/**
 * The Markdown of a merged growth report (`--merge`): which run each scale comes from, then the growth
 * tables and cross-scale checks of {@link renderGrowth}.
 * @param {any} merged results from mergeResults (scripts/bench/merge.mjs)
 * @param {string[]} files the merged results files, in order
 * @returns {string}
 */
export function renderGrowthMarkdown(merged, files) {
  const out = [`# loretrace benchmark growth: ${merged.params.namespace} ×${merged.scales.map((s) => s.scale).join(', ×')}`, ''];
  out.push('| Scale | Notes | MB | From | Wall |');
  out.push('| ---: | ---: | ---: | --- | ---: |');
  for (const s of merged.scales) {
    out.push(`| ×${s.scale} | ${fmtInt(s.vault.notes)} | ${(s.vault.note_bytes / 1e6).toFixed(1)} | ${cell(s.source_file ?? '')} | ${s.duration_s == null ? 'stopped' : `${s.duration_s.toFixed(0)} s`} |`);
  }
  out.push('');
  out.push(`Merged from ${files.length} run(s); each scale's figures are that run's own (phases that did not run there show their status).`);
  out.push(...renderGrowth(merged));
  out.push('');
  return out.join('\n');
}

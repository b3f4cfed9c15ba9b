/**
 * The growth plot of a bench run (pure: results in, SVG text out; written as `<out>/bench-growth.svg`).
 * Four log–log panels over the scales run: time phases (median per run), latency phases (p50 and p99 per
 * call) and peak RSS of every phase. One line per phase that ran ok at two or more scales; a phase that
 * ran at one scale only is a single marker. Same results → byte-identical SVG.
 */
import { PHASES } from './phases.mjs';

const W = 1200;
const H = 980;
const PANEL_W = 520;
const PANEL_H = 300;
const PALETTE = ['#1b9e77', '#d95f02', '#7570b3', '#e7298a', '#66a61e', '#e6ab02', '#a6761d', '#666666', '#1f78b4', '#b2df8a', '#fb9a99', '#cab2d6', '#33a02c', '#ff7f00', '#6a3d9a', '#b15928', '#a6cee3', '#fdbf6f', '#999999', '#e41a1c'];

/** Escape text for SVG. @param {string} s */
function esc(s) {
  return String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** A number with up to 4 significant digits, no exponent noise. @param {number} x */
function num(x) {
  return Number(x.toPrecision(4)).toString();
}

/** Decades covering [lo, hi]: powers of 10 of `unit` (1 for ms; 1 MiB for bytes, so ticks read 10 MiB, 100 MiB, …). */
function decades(lo, hi, unit = 1) {
  const out = [];
  for (let e = Math.floor(Math.log10(lo / unit)); e <= Math.ceil(Math.log10(hi / unit)); e++) out.push(10 ** e * unit);
  return out;
}

/** A tick label: ms / bytes in readable units. */
function tickLabel(v, unit) {
  if (unit === 'bytes') {
    if (v >= 2 ** 30) return `${num(v / 2 ** 30)} GiB`;
    if (v >= 2 ** 20) return `${num(v / 2 ** 20)} MiB`;
    return `${num(v / 1024)} KiB`;
  }
  if (v >= 1000) return `${num(v / 1000)} s`;
  return `${num(v)} ms`;
}

/**
 * One panel: series `{ label, color, points: [scale, value][] }` on log–log axes.
 * @param {{ x: number, y: number, title: string, unit: 'ms' | 'bytes', scales: number[], series: { label: string, color: string, points: [number, number][] }[] }} p
 */
function panel(p) {
  const out = [];
  const left = p.x + 70;
  const top = p.y + 30;
  const pw = PANEL_W - 80;
  const ph = PANEL_H - 70;
  out.push(`<text x="${p.x + 10}" y="${p.y + 18}" font-size="14" font-weight="bold">${esc(p.title)}</text>`);
  const values = p.series.flatMap((s) => s.points.map((pt) => pt[1])).filter((v) => v > 0);
  if (values.length === 0 || p.scales.length === 0) {
    out.push(`<text x="${left}" y="${top + 40}" font-size="12">no figures</text>`);
    return out.join('\n');
  }
  const xs = p.scales;
  const [x0, x1] = [Math.min(...xs), Math.max(...xs)];
  const yTicks = decades(Math.min(...values), Math.max(...values), p.unit === 'bytes' ? 2 ** 20 : 1);
  const [y0, y1] = [yTicks[0], yTicks[yTicks.length - 1] === yTicks[0] ? yTicks[0] * 10 : yTicks[yTicks.length - 1]];
  const lx = (v) => (x1 === x0 ? left + pw / 2 : left + ((Math.log10(v) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0))) * pw);
  const ly = (v) => top + ph - ((Math.log10(v) - Math.log10(y0)) / (Math.log10(y1) - Math.log10(y0))) * ph;
  out.push(`<rect x="${left}" y="${top}" width="${pw}" height="${ph}" fill="none" stroke="#bbb"/>`);
  for (const t of yTicks) {
    const y = ly(t).toFixed(1);
    out.push(`<line x1="${left}" y1="${y}" x2="${left + pw}" y2="${y}" stroke="#eee"/>`);
    out.push(`<text x="${left - 6}" y="${y}" font-size="10" text-anchor="end" dominant-baseline="middle">${esc(tickLabel(t, p.unit))}</text>`);
  }
  for (const s of xs) {
    const x = lx(s).toFixed(1);
    out.push(`<line x1="${x}" y1="${top}" x2="${x}" y2="${top + ph}" stroke="#eee"/>`);
    out.push(`<text x="${x}" y="${top + ph + 14}" font-size="10" text-anchor="middle">×${s}</text>`);
  }
  for (const s of p.series) {
    const pts = s.points.filter((pt) => pt[1] > 0).map(([sc, v]) => `${lx(sc).toFixed(1)},${ly(v).toFixed(1)}`);
    if (pts.length > 1) out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.8" points="${pts.join(' ')}"/>`);
    for (const pt of pts) {
      const [cx, cy] = pt.split(',');
      out.push(`<circle cx="${cx}" cy="${cy}" r="2.6" fill="${s.color}"/>`);
    }
  }
  // Legend below the panel, two columns.
  p.series.forEach((s, i) => {
    const lxp = p.x + 10 + (i % 2) * 260;
    const lyp = top + ph + 30 + Math.floor(i / 2) * 13;
    out.push(`<rect x="${lxp}" y="${lyp - 8}" width="10" height="3" fill="${s.color}"/>`);
    out.push(`<text x="${lxp + 14}" y="${lyp - 4}" font-size="10">${esc(s.label)}</text>`);
  });
  return out.join('\n');
}

/**
 * The SVG text of the growth plot.
 * @param {any} results a bench-results object (schemas/bench-results.schema.json)
 * @returns {string}
 */
export function renderGrowthSvg(results) {
  const scales = results.scales.map((s) => s.scale);
  const color = new Map(PHASES.map((d, i) => [d.id, PALETTE[i % PALETTE.length]]));
  const seriesOf = (defs, stat) =>
    defs
      .map((d) => ({
        label: `${d.id} (${d.kind})`,
        color: /** @type {string} */ (color.get(d.id)),
        points: /** @type {[number, number][]} */ (
          results.scales.filter((s) => s.phases[d.id]?.status === 'ok' && s.phases[d.id][stat] != null).map((s) => [s.scale, s.phases[d.id][stat]])
        ),
      }))
      .filter((s) => s.points.length > 0);
  const time = PHASES.filter((d) => d.stat === 'time');
  const latency = PHASES.filter((d) => d.stat === 'latency');
  const body = [
    panel({ x: 20, y: 60, title: 'Time phases: median per run', unit: 'ms', scales, series: seriesOf(time, 'median_ms') }),
    panel({ x: 620, y: 60, title: 'Latency phases: p50 per call', unit: 'ms', scales, series: seriesOf(latency, 'p50_ms') }),
    panel({ x: 20, y: 520, title: 'Latency phases: p99 per call', unit: 'ms', scales, series: seriesOf(latency, 'p99_ms') }),
    panel({ x: 620, y: 520, title: 'Peak RSS of each phase process', unit: 'bytes', scales, series: seriesOf(PHASES, 'peak_rss_bytes') }),
  ];
  const m = results.machine;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="white"/>`,
    `<text x="20" y="26" font-size="17" font-weight="bold">loretrace bench: growth over ×${esc(scales.join(', ×'))} of ${esc(results.params.namespace)} (log–log)</text>`,
    `<text x="20" y="46" font-size="11">${esc(`${m.nproc} × ${m.cpu_model}, Node ${m.node_version}; ${results.generated_at}; ${results.command}`)}</text>`,
    ...body,
    '</svg>',
    '',
  ].join('\n');
}

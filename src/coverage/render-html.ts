/**
 * `coverage.html`: the coverage report as ONE self-contained page — inline CSS, inline JS, inline SVG;
 * no network (a Content-Security-Policy of `default-src 'none'` says so to the browser), no external
 * fonts, no server. Contents: totals, a sortable table of notes, an SVG bar chart of line coverage
 * per target class and one per folder (exactly one bar per class / folder), a vault tree shaded by
 * coverage, stale citations, skipped inputs, refs counted apart and the vault's gaps.
 * Pure string function; same report ⇒ same bytes.
 */
import { pct } from './format.js';
import type { CoverageReport, GroupCoverage, NoteCoverage } from './types.js';

/** Escape text for HTML element content and double-quoted attributes. */
function esc(value: string | number | null | undefined): string {
  return String(value ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** Fill colour for a coverage share: grey when never cited, then pale to deep green. */
function shade(coverage: number | null, cited: boolean): string {
  if (!cited) return '#eceff1';
  const c = coverage ?? 0;
  const light = Math.round(92 - c * 52);
  return `hsl(145, 55%, ${light}%)`;
}

function ink(coverage: number | null, cited: boolean): string {
  return cited && (coverage ?? 0) > 0.6 ? '#ffffff' : '#1b2631';
}

interface BarRow {
  key: string;
  label: string;
  group: GroupCoverage;
}

/**
 * A horizontal SVG bar chart: one `<rect class="bar">` per row, width = line coverage, with a grey
 * track and a label `name — cited/notes notes · NN.N%`.
 */
function barChart(id: string, title: string, rows: BarRow[]): string {
  const rowH = 22;
  const labelW = 380;
  const barW = 360;
  const h = rows.length * rowH + 8;
  const w = labelW + barW + 70;
  const parts: string[] = [];
  parts.push(`<svg id="${esc(id)}" class="chart" role="img" aria-label="${esc(title)}" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" xmlns="http://www.w3.org/2000/svg">`);
  rows.forEach((r, i) => {
    const y = 4 + i * rowH;
    const cov = r.group.line_coverage ?? 0;
    const bw = Math.round(cov * barW * 10) / 10;
    const label = r.label.length > 52 ? '…' + r.label.slice(-51) : r.label;
    parts.push(
      `<g class="row" data-key="${esc(r.key)}"><title>${esc(r.key)}: ${r.group.cited_notes}/${r.group.notes} notes cited, ${r.group.citations} citations, ${r.group.covered_lines}/${r.group.body_lines} lines (${pct(r.group.line_coverage)})</title>` +
        `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end" class="lbl">${esc(label)}</text>` +
        `<rect class="track" x="${labelW}" y="${y + 3}" width="${barW}" height="${rowH - 8}" rx="3"></rect>` +
        `<rect class="bar" data-key="${esc(r.key)}" data-coverage="${r.group.line_coverage ?? ''}" x="${labelW}" y="${y + 3}" width="${bw}" height="${rowH - 8}" rx="3" fill="${r.group.cited_notes > 0 ? '#239b56' : '#b0bec5'}"></rect>` +
        `<text x="${labelW + barW + 6}" y="${y + 15}" class="val">${esc(pct(r.group.line_coverage))}</text></g>`,
    );
  });
  parts.push('</svg>');
  return parts.join('');
}

interface TreeNode {
  name: string;
  path: string;
  folders: Map<string, TreeNode>;
  notes: NoteCoverage[];
}

function buildTree(report: CoverageReport): TreeNode {
  const root: TreeNode = { name: report.namespace, path: '', folders: new Map(), notes: [] };
  for (const n of report.notes) {
    let node = root;
    const segs = n.folder === '' ? [] : n.folder.split('/');
    segs.forEach((s, i) => {
      let next = node.folders.get(s);
      if (!next) {
        next = { name: s, path: segs.slice(0, i + 1).join('/'), folders: new Map(), notes: [] };
        node.folders.set(s, next);
      }
      node = next;
    });
    node.notes.push(n);
  }
  return root;
}

function treeHtml(node: TreeNode, report: CoverageReport, isRoot: boolean): string {
  const folderRow = isRoot ? null : report.folders.find((f) => f.folder === node.path) ?? null;
  const names = [...node.folders.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const kids = names.map((k) => `<li>${treeHtml(node.folders.get(k)!, report, false)}</li>`).join('');
  const notes = node.notes
    .map((n) => {
      const cited = n.citations > 0;
      return `<li class="tnote"><span class="chip" style="background:${shade(n.line_coverage, cited)};color:${ink(n.line_coverage, cited)}" title="${esc(n.path)}: ${n.citations} citations, ${n.covered_lines}/${n.body_lines} lines">${esc(n.path.slice(n.path.lastIndexOf('/') + 1))} <b>${cited ? esc(pct(n.line_coverage)) : 'never cited'}</b></span></li>`;
    })
    .join('');
  const t = report.totals;
  const cov = folderRow ? folderRow.line_coverage : t.line_coverage;
  const cited = folderRow ? folderRow.cited_notes > 0 : t.cited_notes > 0;
  const summary = `<span class="chip folder" style="background:${shade(cov, cited)};color:${ink(cov, cited)}">${esc(node.name)}/ <b>${esc(pct(cov))}</b> <small>${folderRow ? `${folderRow.cited_notes}/${folderRow.notes}` : `${t.cited_notes}/${t.notes}`} notes cited</small></span>`;
  const depth = node.path === '' ? 0 : node.path.split('/').length;
  // Open the top levels and every folder that holds a cited note; the rest start folded.
  const open = depth <= 1 || (folderRow !== null && folderRow.cited_notes > 0);
  return `<details${open ? ' open' : ''} data-folder="${esc(node.path)}"><summary>${summary}</summary><ul>${kids}${notes}</ul></details>`;
}

const CSS = `
:root{--fg:#1b2631;--mute:#5d6d7e;--line:#d5dbdf;--bg:#fbfcfc}
*{box-sizing:border-box}
body{margin:0;padding:24px 32px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:var(--fg);background:var(--bg)}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px}
.sub{color:var(--mute);margin:0 0 16px}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:130px}
.card b{display:block;font-size:20px}.card span{color:var(--mute);font-size:12px}
.charts{display:flex;flex-wrap:wrap;gap:24px}
.chart .lbl{font-size:12px;fill:var(--fg)}.chart .val{font-size:12px;fill:var(--mute)}.chart .track{fill:#eceff1}
table{border-collapse:collapse;background:#fff;font-size:13px}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right}
th button{all:unset;cursor:pointer;font-weight:600}th button:focus-visible{outline:2px solid #2e86c1}
th[aria-sort=ascending] button::after{content:" ▲"}th[aria-sort=descending] button::after{content:" ▼"}
.tree ul{list-style:none;margin:2px 0 2px 18px;padding:0}.tree>details>ul{margin-left:8px}
.tree summary{cursor:pointer}
.chip{display:inline-block;border-radius:4px;padding:1px 6px;margin:1px 0;font-size:12px}
.chip.folder{font-weight:600}
.legend span{display:inline-block;width:14px;height:10px;border-radius:2px;margin:0 4px 0 10px;vertical-align:middle}
.scroll{max-height:560px;overflow:auto;border:1px solid var(--line)}
.empty{color:var(--mute);font-style:italic}
#stale td:nth-child(3){white-space:nowrap}
`;

const JS = `
(function(){
  var table=document.getElementById('notes');
  if(!table)return;
  var body=table.tBodies[0];
  var heads=table.tHead.rows[0].cells;
  function key(row,i,num){var v=row.cells[i].getAttribute('data-v');return num?(v===''?-1:Number(v)):v;}
  function cmp(a,b){return a<b?-1:a>b?1:0;}
  Array.prototype.forEach.call(heads,function(th,i){
    var btn=th.querySelector('button');if(!btn)return;
    btn.addEventListener('click',function(){
      var num=th.getAttribute('data-type')==='num';
      var dir=th.getAttribute('aria-sort')==='ascending'?'descending':'ascending';
      Array.prototype.forEach.call(heads,function(h){h.removeAttribute('aria-sort');});
      th.setAttribute('aria-sort',dir);
      var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var c=cmp(key(a,i,num),key(b,i,num));
        if(dir==='descending')c=-c;
        return c||cmp(a.getAttribute('data-path'),b.getAttribute('data-path'));
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
})();
`;

function section(title: string, id: string, inner: string): string {
  return `<section id="${id}"><h2>${esc(title)}</h2>${inner}</section>`;
}

function simpleTable(head: string[], rows: (string | number | null | undefined)[][], numeric: number[] = []): string {
  if (rows.length === 0) return '<p class="empty">none</p>';
  const th = head.map((h, i) => `<th${numeric.includes(i) ? ' class="n"' : ''}>${esc(h)}</th>`).join('');
  const trs = rows.map((r) => `<tr>${r.map((v, i) => `<td${numeric.includes(i) ? ' class="n"' : ''}>${esc(v)}</td>`).join('')}</tr>`).join('');
  return `<div class="scroll"><table><thead><tr>${th}</tr></thead><tbody>${trs}</tbody></table></div>`;
}

/**
 * Render a {@link CoverageReport} as one self-contained HTML page (UTF-8). Element ids used by the
 * browser test and by anyone scripting the page: `#chart-classes`, `#chart-folders` (SVG, one
 * `rect.bar` per class / folder), `#notes` (the sortable table: click a header button to sort,
 * again to reverse; ties by path), `#tree` (vault tree; `details[data-folder]`).
 */
export function renderCoverageHtml(report: CoverageReport): string {
  const t = report.totals;
  const cards: [string, string | number][] = [
    ['notes', t.notes],
    ['notes cited', `${t.cited_notes}`],
    ['line coverage', pct(t.line_coverage)],
    ['artifacts', t.artifacts],
    ['lore citations', t.lore_citations],
    ['stale citations', t.stale_citations],
    ['untouched classes', t.untouched_classes],
    ['skipped inputs', t.skipped_inputs],
    ['refs counted apart', t.non_lore_refs + t.other_namespace_refs + t.rejected_refs],
    ['unresolved links', t.unresolved_links],
    ['orphan notes', t.orphan_notes],
  ];
  const cols: { title: string; num: boolean; get: (n: NoteCoverage) => string | number | null; show?: (n: NoteCoverage) => string }[] = [
    { title: 'note', num: false, get: (n) => n.path },
    { title: 'classes', num: false, get: (n) => n.classes.join(' ') },
    { title: 'citations', num: true, get: (n) => n.citations },
    { title: 'artifacts', num: true, get: (n) => n.artifacts },
    { title: 'stale', num: true, get: (n) => n.stale_citations },
    { title: 'body lines', num: true, get: (n) => n.body_lines },
    { title: 'covered', num: true, get: (n) => n.covered_lines },
    { title: 'line coverage', num: true, get: (n) => n.line_coverage, show: (n) => pct(n.line_coverage) },
    { title: 'inbound links', num: true, get: (n) => n.inbound_links },
  ];
  const notesTable =
    `<div class="scroll"><table id="notes"><thead><tr>${cols.map((c) => `<th data-type="${c.num ? 'num' : 'text'}"${c.num ? ' class="n"' : ''}><button type="button">${esc(c.title)}</button></th>`).join('')}</tr></thead><tbody>` +
    report.notes.map((n) => `<tr data-path="${esc(n.path)}">${cols.map((c) => {
      const v = c.get(n);
      return `<td${c.num ? ' class="n"' : ''} data-v="${esc(v === null ? '' : v)}">${esc(c.show ? c.show(n) : v)}</td>`;
    }).join('')}</tr>`).join('') +
    '</tbody></table></div>';
  const classChart = report.classes.length === 0 ? '<p class="empty">no classes</p>' : barChart('chart-classes', 'Line coverage per target class', report.classes.map((c) => ({ key: c.class, label: `${c.class} (${c.cited_notes}/${c.notes})`, group: c })));
  const folderChart = report.folders.length === 0 ? '<p class="empty">no folders</p>' : barChart('chart-folders', 'Line coverage per folder (with subfolders)', report.folders.map((f) => ({ key: f.folder, label: `${f.folder}/ (${f.cited_notes}/${f.notes})`, group: f })));
  const where = (c: { artifact: string; pointer: string; record_line?: number }): string => `${c.artifact}${c.record_line !== undefined ? `:${c.record_line}` : ''} ${c.pointer || '/'}`;
  const html = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Lore coverage: ${esc(report.namespace)}</title>
<style>${CSS}</style>
</head>
<body>
<h1>Lore coverage: ${esc(report.namespace)}</h1>
<p class="sub">Vault snapshot <code>${esc(report.snapshot_id)}</code> · <code>${esc(report.schema_version)}</code> · line coverage = share of non-blank body lines inside a non-stale citation</p>
<div class="cards">${cards.map(([k, v]) => `<div class="card"><b>${esc(v)}</b><span>${esc(k)}</span></div>`).join('')}</div>
${section('Coverage charts', 'charts', `<p class="legend">Bars: share of non-blank body lines covered (green: at least one note cited; grey: none). Tree: <span style="background:${shade(0, false)}"></span>never cited<span style="background:${shade(0.1, true)}"></span>cited, little text covered<span style="background:${shade(1, true)}"></span>fully covered</p><div class="charts"><figure><figcaption>Per target class (cited/notes)</figcaption>${classChart}</figure><figure><figcaption>Per folder, subfolders included (cited/notes)</figcaption>${folderChart}</figure></div>`)}
${section('Vault tree', 'tree-section', `<div id="tree" class="tree">${treeHtml(buildTree(report), report, true)}</div>`)}
${section('Notes', 'notes-section', `<p class="sub">Click a column header to sort; click again to reverse.</p>${notesTable}`)}
${section('Untouched classes and never-cited notes', 'untouched', (report.untouched_classes.length === 0 ? '<p class="empty">every class has a cited note</p>' : `<p>${report.untouched_classes.map((c) => `<code>${esc(c)}</code>`).join(' ')}</p>`) + simpleTable(['class', 'never cited', 'notes'], report.classes.filter((c) => c.never_cited.length > 0).map((c) => [c.class, `${c.never_cited.length}/${c.notes}`, c.never_cited.join(', ')])))}
${section('Stale citations', 'stale', simpleTable(['artifact / pointer', 'ref', 'lines', 'status', 'detail'], report.stale.map((c) => [where(c), c.ref, c.line_start === null ? '–' : `${c.line_start}-${c.line_end}`, c.status, c.detail])))}
${section('Artifacts', 'artifacts', simpleTable(['file', 'kind', 'lore citations', 'stale', 'non-lore', 'other namespace', 'refused', 'snapshot'], report.artifacts.map((a) => [a.file, a.kind, a.lore_citations, a.stale_citations, a.non_lore_refs, a.other_namespace_refs, a.rejected_refs, a.snapshot_matches === null ? 'not recorded' : a.snapshot_matches ? 'matches' : 'differs']), [2, 3, 4, 5, 6]))}
${section('Skipped inputs', 'skipped', simpleTable(['file', 'reason', 'message'], report.skipped.map((s) => [s.file, s.reason, s.message])))}
${section('Refs counted apart', 'apart', simpleTable(['artifact / pointer', 'ref', 'counted as'], [
    ...report.other_namespace_refs.map((r) => [where(r), r.ref, `other namespace (${r.namespace})`]),
    ...report.rejected_refs.map((r) => [where(r), r.ref, `refused: ${r.detail}`]),
    ...report.non_lore_refs.map((r) => [where(r), r.ref, 'not vault lore']),
  ]))}
${section('Vault gaps', 'gaps', `<h3>Unresolved links (${report.gaps.unresolved_links.length})</h3>${simpleTable(['source', 'link', 'target'], report.gaps.unresolved_links.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.target]))}<h3>Ambiguous links (${report.gaps.ambiguous_links.length})</h3>${simpleTable(['source', 'link', 'resolved to', 'candidates'], report.gaps.ambiguous_links.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.resolved_to, g.candidates.join(', ')]))}<h3>Broken heading/block fragments (${report.gaps.broken_fragments.length})</h3>${simpleTable(['source', 'link', 'note', 'fragment'], report.gaps.broken_fragments.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.path, g.fragment]))}<h3>Orphan notes (${report.gaps.orphan_notes.length})</h3>${report.gaps.orphan_notes.length === 0 ? '<p class="empty">none</p>' : `<ul>${report.gaps.orphan_notes.map((p) => `<li><code>${esc(p)}</code></li>`).join('')}</ul>`}`)}
<script>${JS}</script>
</body>
</html>
`;
  return html;
}

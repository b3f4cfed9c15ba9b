/**
 * `coverage.html`: the coverage report as ONE self-contained page — inline CSS, inline JS, inline SVG;
 * no network (a Content-Security-Policy of `default-src 'none'` says so to the browser), no external
 * fonts, no server. Laid out for a lore author, in the order they act on it: totals; what to fix (stale
 * citations, unresolved links with file:line, orphan notes, never-cited classes and folders); the cited
 * notes, most cited first, each with its lines and the cited ranges marked; a link graph of the cited
 * notes and their one-hop neighbours; bar charts of line coverage per class and per folder (full names on
 * hover; classes that only repeat a folder name can be folded away); the vault tree; the sortable notes
 * table; the corpus join; artifacts, skipped inputs and refs counted apart.
 * Pure string function; same report and context ⇒ same bytes.
 */
import { citedNotesFirst, pct, rangesText } from './format.js';
import type { VaultIndex } from '../types.js';
import type { CoverageReport, GroupCoverage, NoteCoverage } from './types.js';

/**
 * What the page shows beyond the report itself (both optional; without them the cited notes show no
 * lines and there is no link graph):
 * - `noteLines`: current lines of each note by vault path (`loadNoteLines`), to show cited lines;
 * - `index`: the vault index the report was computed against, whose note-to-note links draw the link graph.
 */
export interface CoverageHtmlContext {
  noteLines?: ReadonlyMap<string, readonly string[]>;
  index?: Pick<VaultIndex, 'links'>;
}

/**
 * The note-to-note links of `index` for the HTML link graph: every link that resolves (or ambiguously
 * resolves) to another note, as `{ source, target }` vault paths, de-duplicated, in code-unit order.
 */
export function noteLinks(index: Pick<VaultIndex, 'links'>): { source: string; target: string }[] {
  const seen = new Set<string>();
  const out: { source: string; target: string }[] = [];
  for (const l of index.links) {
    const r = l.resolution;
    if ((r.status !== 'resolved' && r.status !== 'ambiguous' && r.status !== 'broken_fragment') || r.path === l.source_path) continue;
    const key = `${l.source_path}\u0000${r.path}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ source: l.source_path, target: r.path });
  }
  return out.sort((a, b) => (a.source < b.source ? -1 : a.source > b.source ? 1 : a.target < b.target ? -1 : a.target > b.target ? 1 : 0));
}



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
  const w = labelW + barW + 110;
  const parts: string[] = [];
  // width 100% with a viewBox: the chart scales to the page; the full name is in each row's <title> (hover).
  parts.push(`<svg id="${esc(id)}" class="chart" role="img" aria-label="${esc(title)}" width="100%" preserveAspectRatio="xMinYMin meet" viewBox="0 0 ${w} ${h}" xmlns="http://www.w3.org/2000/svg">`);
  rows.forEach((r, i) => {
    const y = 4 + i * rowH;
    const cov = r.group.line_coverage ?? 0;
    const bw = Math.round(cov * barW * 10) / 10;
    const noteShare = r.group.notes === 0 ? 0 : r.group.cited_notes / r.group.notes;
    const nw = Math.round(noteShare * barW * 10) / 10;
    const label = r.label.length > 52 ? '…' + r.label.slice(-51) : r.label;
    parts.push(
      `<g class="row" data-key="${esc(r.key)}"><title>${esc(r.key)}: ${r.group.cited_notes}/${r.group.notes} notes cited, ${r.group.citations} citations (${r.group.whole_citations} of a whole note or section), ${r.group.covered_lines}/${r.group.body_lines} lines in cited ranges (${pct(r.group.line_coverage)})</title>` +
        `<text x="${labelW - 8}" y="${y + 15}" text-anchor="end" class="lbl">${esc(label)}</text>` +
        `<rect class="track" x="${labelW}" y="${y + 3}" width="${barW}" height="${rowH - 8}" rx="3"></rect>` +
        `<rect class="bar" data-key="${esc(r.key)}" data-coverage="${r.group.line_coverage ?? ''}" x="${labelW}" y="${y + 3}" width="${bw}" height="${rowH - 11}" rx="2" fill="${r.group.cited_notes > 0 ? '#239b56' : '#b0bec5'}"></rect>` +
        `<rect class="notes-bar" data-key="${esc(r.key)}" x="${labelW}" y="${y + rowH - 8}" width="${nw}" height="3" fill="#2e86c1"></rect>` +
        `<text x="${labelW + barW + 6}" y="${y + 15}" class="val">${esc(pct(r.group.line_coverage))} · ${esc(pct(noteShare))}</text></g>`,
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
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;overflow-wrap:anywhere}
.sub{color:var(--mute);margin:0 0 16px}
.cards{display:flex;flex-wrap:wrap;gap:10px}
.card{background:#fff;border:1px solid var(--line);border-radius:6px;padding:8px 12px;min-width:130px}
.card b{display:block;font-size:20px}.card span{color:var(--mute);font-size:12px}
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
.mute{color:var(--mute)}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,520px),1fr));gap:24px}.charts figure{margin:0;min-width:0}
.todo{display:grid;grid-template-columns:repeat(auto-fit,minmax(min(100%,260px),1fr));gap:12px}.todo>div{background:#fff;border:1px solid var(--line);border-radius:6px;padding:6px 12px;min-width:0;overflow-wrap:anywhere}
.todo h3{font-size:14px;margin:4px 0}.gap{margin:0;padding-left:18px;max-height:220px;overflow:auto}
.cnote{background:#fff;border:1px solid var(--line);border-radius:6px;margin:6px 0;padding:4px 10px;overflow-wrap:anywhere}.cnote summary{cursor:pointer}
.badge{display:inline-block;border-radius:10px;padding:0 8px;background:#d4efdf;font-size:12px}.badge.whole{background:#d6eaf8}.badge.stale{background:#f5b7b1}.badge.unver{background:#fcf3cf}
ol.lines{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:12px;margin:6px 0;padding-left:56px;white-space:pre-wrap}
ol.lines li{padding:0 4px}ol.lines li.cited{background:#d4efdf;border-left:3px solid #239b56}ol.lines li.skip{list-style:none;color:var(--mute);font-style:italic;margin-left:-40px}
#link-graph{max-width:900px;background:#fff;border:1px solid var(--line);border-radius:6px}#link-graph .edges line{stroke:#aab7b8;stroke-width:1}
#link-graph .node circle{stroke:#fff;stroke-width:1.5}#link-graph .node.cited circle{fill:#239b56}#link-graph .node.uncited circle{fill:#b0bec5}#link-graph text{font-size:10px;fill:var(--fg)}
.fold{display:block;margin:4px 0 10px}
.scroll{max-width:100%}
@media (max-width:700px){body{padding:12px}.card{min-width:44%}}
#stale td:nth-child(3){white-space:nowrap}
`;

const JS = `
(function(){
  var fold=document.getElementById('fold-folder-classes');
  if(fold)fold.addEventListener('change',function(){
    document.getElementById('classes-all').hidden=fold.checked;
    document.getElementById('classes-own').hidden=!fold.checked;
  });
})();
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

/** Lower-kebab of a folder segment, as src/links/classes.ts derives folder classes. */
const kebab = (name: string): string => name.normalize('NFC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '');

/**
 * Classes that only repeat a folder name: every note carrying the class has a folder segment whose
 * lower-kebab form is the class. They add no information beyond the folder chart, so the page can fold
 * them away.
 */
export function folderOnlyClasses(report: CoverageReport): Set<string> {
  const out = new Set<string>();
  for (const c of report.classes) {
    const carriers = report.notes.filter((n) => n.classes.includes(c.class));
    if (carriers.length > 0 && carriers.every((n) => n.folder.split('/').some((seg) => kebab(seg) === c.class))) out.add(c.class);
  }
  return out;
}

/** Lines of context shown around each cited range of a cited note. */
const CONTEXT_LINES = 2;
/** Lines shown of a note cited only as a whole (no line citation). */
const HEAD_LINES = 8;

/**
 * One cited note: a summary line (citations, whole-note citations, stale, covered/body) and its lines,
 * cited ranges marked (`li.cited`), with a little context; a gap between shown runs is one `li.skip`.
 */
function citedNoteHtml(n: NoteCoverage, lines: readonly string[] | undefined, open: boolean): string {
  const head = `<summary><code>${esc(n.path)}</code> <span class="badge">${n.citations} citation${n.citations === 1 ? '' : 's'}</span>` +
    (n.whole_citations > 0 ? ` <span class="badge whole" title="citations of the whole note, a #Heading or a #chunk: not counted as lines">note cited ×${n.whole_citations}</span>` : '') +
    (n.stale_citations > 0 ? ` <span class="badge stale">${n.stale_citations} stale</span>` : '') +
    (n.unverifiable_citations > 0 ? ` <span class="badge unver" title="another snapshot, nothing recorded to compare">${n.unverifiable_citations} unverifiable</span>` : '') +
    ` <span class="mute">lines ${esc(rangesText(n.cited_ranges))} · ${n.covered_lines}/${n.body_lines} body lines (${esc(pct(n.line_coverage))})</span></summary>`;
  if (!lines) return `<details class="cnote" data-path="${esc(n.path)}"${open ? ' open' : ''}>${head}<p class="empty">lines not loaded</p></details>`;
  const show = new Set<number>();
  const cited = new Set<number>();
  for (const [a, b] of n.cited_ranges) {
    for (let i = a; i <= b; i++) cited.add(i);
    for (let i = Math.max(1, a - CONTEXT_LINES); i <= Math.min(lines.length, b + CONTEXT_LINES); i++) show.add(i);
  }
  if (n.cited_ranges.length === 0) for (let i = 1; i <= Math.min(lines.length, HEAD_LINES); i++) show.add(i);
  const items: string[] = [];
  let last = 0;
  for (const i of [...show].sort((x, y) => x - y)) {
    if (i > last + 1) items.push(`<li class="skip">⋯ lines ${last + 1}-${i - 1}</li>`);
    items.push(`<li value="${i}"${cited.has(i) ? ' class="cited"' : ''}>${esc(lines[i - 1]) || '&#8203;'}</li>`);
    last = i;
  }
  if (last < lines.length) items.push(`<li class="skip">⋯ lines ${last + 1}-${lines.length}</li>`);
  const note = n.cited_ranges.length === 0 ? '<p class="mute">cited only as a whole note or section: no lines are marked</p>' : '';
  return `<details class="cnote" data-path="${esc(n.path)}"${open ? ' open' : ''}>${head}${note}<ol class="lines">${items.join('')}</ol></details>`;
}

/** Cited notes kept in the link graph at most, and one-hop neighbours at most (most linked first). */
const GRAPH_CITED = 24;
const GRAPH_NEIGHBOURS = 48;

/**
 * The link graph as inline SVG: the cited notes (most cited first, at most {@link GRAPH_CITED}) on an
 * inner ring, their one-hop neighbours (linked to or from them; at most {@link GRAPH_NEIGHBOURS}, most
 * connected first) on an outer ring, cited notes green and never-cited ones grey. Deterministic layout:
 * positions follow the sorted order, angles evenly spaced.
 */
function linkGraph(report: CoverageReport, links: readonly { source: string; target: string }[]): string {
  const cited = citedNotesFirst(report.notes).slice(0, GRAPH_CITED).map((n) => n.path as string);
  if (cited.length === 0) return '<p class="empty">no cited notes</p>';
  const citedSet = new Set(cited);
  const isCited = new Set(report.notes.filter((n) => n.citations > 0).map((n) => n.path as string));
  const degree = new Map<string, number>();
  const edges = new Set<string>();
  for (const l of links) {
    if (l.source === l.target) continue;
    const inA = citedSet.has(l.source);
    const inB = citedSet.has(l.target);
    if (!inA && !inB) continue;
    const other = inA ? l.target : l.source;
    if (!(inA && inB)) degree.set(other, (degree.get(other) ?? 0) + 1);
    edges.add(`${l.source}\u0000${l.target}`);
  }
  const neighbours = [...degree.keys()].sort((a, b) => degree.get(b)! - degree.get(a)! || (a < b ? -1 : 1)).slice(0, GRAPH_NEIGHBOURS);
  const W = 760;
  const H = 560;
  const cx = W / 2;
  const cy = H / 2;
  const pos = new Map<string, [number, number]>();
  const ring = (list: string[], r: number): void => list.forEach((p, i) => {
    const t = (2 * Math.PI * i) / list.length - Math.PI / 2;
    pos.set(p, [Math.round((cx + r * Math.cos(t)) * 10) / 10, Math.round((cy + r * Math.sin(t)) * 10) / 10]);
  });
  ring(cited, cited.length === 1 ? 0 : 130);
  ring(neighbours, 245);
  // An index note is named by its folder too (`Brainstorming/index`): a bare "index" says nothing.
  const name = (p: string): string => {
    const segs = p.replace(/\.md$/i, '').split('/');
    const last = segs[segs.length - 1]!;
    return last.toLowerCase() === 'index' && segs.length > 1 ? `${segs[segs.length - 2]}/${last}` : last;
  };
  const lines = [...edges].sort().map((e) => {
    const [a, b] = e.split('\u0000') as [string, string];
    const pa = pos.get(a);
    const pb = pos.get(b);
    return pa && pb ? `<line x1="${pa[0]}" y1="${pa[1]}" x2="${pb[0]}" y2="${pb[1]}"></line>` : '';
  }).join('');
  const dot = (p: string): string => {
    const [x, y] = pos.get(p)!;
    const c = isCited.has(p);
    const label = name(p);
    return `<g class="node ${c ? 'cited' : 'uncited'}" data-path="${esc(p)}"><title>${esc(p)}${c ? '' : ' (never cited)'}</title><circle cx="${x}" cy="${y}" r="${citedSet.has(p) ? 7 : 5}"></circle><text x="${x}" y="${y - 10}" text-anchor="middle">${esc(label.length > 22 ? label.slice(0, 21) + '…' : label)}</text></g>`;
  };
  return `<svg id="link-graph" role="img" aria-label="Links of the cited notes and their one-hop neighbours" width="100%" viewBox="0 0 ${W} ${H}" preserveAspectRatio="xMidYMid meet" xmlns="http://www.w3.org/2000/svg"><g class="edges">${lines}</g>${cited.map(dot).join('')}${neighbours.map(dot).join('')}</svg>` +
    `<p class="legend"><span style="background:#239b56"></span>cited<span style="background:#b0bec5"></span>never cited · inner ring: the ${cited.length} most cited notes; outer ring: ${neighbours.length} notes one link away${degree.size > neighbours.length ? ` (of ${degree.size})` : ''}</p>`;
}

/** Top-most folders no artifact cites (a never-cited folder whose parent folder is cited, or a top-level one). */
function neverCitedFolders(report: CoverageReport): string[] {
  const byName = new Map(report.folders.map((f) => [f.folder, f]));
  return report.folders
    .filter((f) => f.cited_notes === 0)
    .filter((f) => {
      const parent = f.folder.includes('/') ? byName.get(f.folder.slice(0, f.folder.lastIndexOf('/'))) : undefined;
      return parent === undefined || parent.cited_notes > 0;
    })
    .map((f) => f.folder);
}

/** The "what to act on" block near the top: stale citations, unresolved links, orphans, never-cited classes and folders. */
function actionList(report: CoverageReport, folderClasses: ReadonlySet<string>): string {
  const g = report.gaps;
  const unresolved = g.unresolved_links.length === 0 ? '<p class="empty">none</p>'
    : `<ul class="gap">${g.unresolved_links.map((u) => `<li><code>${esc(`${u.source_path}:${u.line}`)}</code> ${esc(u.raw)} <span class="mute">→ no note “${esc(u.target)}”</span></li>`).join('')}</ul>`;
  const orphans = g.orphan_notes.length === 0 ? '<p class="empty">none</p>' : `<ul class="gap">${g.orphan_notes.map((p) => `<li><code>${esc(p)}</code></li>`).join('')}</ul>`;
  const classes = report.untouched_classes.filter((c) => !folderClasses.has(c));
  const folders = neverCitedFolders(report);
  return `<div class="todo">` +
    `<div><h3>Stale citations (${report.totals.stale_citations})</h3>${report.totals.stale_citations === 0 ? '<p class="empty">none</p>' : `<p>${report.totals.stale_citations} citation${report.totals.stale_citations === 1 ? ' no longer holds' : 's no longer hold'}: listed under “Stale citations” below</p>`}</div>` +
    `<div><h3>Unresolved links (${g.unresolved_links.length})</h3>${unresolved}</div>` +
    `<div><h3>Orphan notes (${g.orphan_notes.length})</h3>${orphans}</div>` +
    `<div><h3>Never-cited classes (${classes.length})</h3>${classes.length === 0 ? '<p class="empty">none</p>' : `<p>${classes.map((c) => `<code>${esc(c)}</code>`).join(' ')}</p>`}${folderClasses.size > 0 ? `<p class="mute">${report.untouched_classes.length - classes.length} more only repeat a folder name (see the folders)</p>` : ''}</div>` +
    `<div><h3>Never-cited folders (${folders.length})</h3>${folders.length === 0 ? '<p class="empty">none</p>' : `<ul class="gap">${folders.map((f) => `<li><code>${esc(f)}/</code></li>`).join('')}</ul>`}</div>` +
    `</div>`;
}

/** The join with Ghostlight's fixture corpus, when the report has one. */
function corpusHtml(report: CoverageReport): string {
  const c = report.corpus;
  if (!c) return '';
  const rows = c.subjects.map((x) => [x.subject, x.roles.join(', '), x.path ?? 'no matching note', x.citations, x.fixtures.join(', ')]);
  return section('Fixture corpus subjects', 'corpus',
    `<p>From ${c.files.map((f) => `<code>${esc(f)}</code>`).join(', ')}: <b>${c.totals.cited_subjects}</b> of ${c.totals.subjects} subjects have lore citations; ${c.totals.subjects - c.totals.matched_subjects} match no note.</p>` +
    simpleTable(['subject', 'roles', 'note', 'citations', 'fixtures'], rows, [3]) +
    simpleTable(['fixture', 'status', 'subjects', 'cited', 'uncited subjects'], c.fixtures.map((f) => [f.fixture_id, f.status, f.subjects, f.cited_subjects, f.uncited.join(', ')]), [2, 3]));
}

/**
 * Render a {@link CoverageReport} as one self-contained HTML page (UTF-8). Element ids used by the
 * browser test and by anyone scripting the page: `#todo` (what to act on), `#cited` (cited notes, most
 * cited first; `details.cnote[data-path]`, cited lines `li.cited`), `#link-graph` (SVG; `g.node[data-path]`),
 * `#chart-classes`, `#chart-classes-own` (the same without the classes that only repeat a folder name;
 * `#fold-folder-classes` switches between them), `#chart-folders` (SVG, one `rect.bar` per class /
 * folder; full names in each row's `<title>`), `#notes` (the sortable table: click a header button to
 * sort, again to reverse; ties by path), `#tree` (vault tree; `details[data-folder]`), `#corpus`.
 *
 * @param report the report (`coverageReport`).
 * @param context note lines and links for the cited-lines view and the link graph ({@link CoverageHtmlContext}).
 */
export function renderCoverageHtml(report: CoverageReport, context: CoverageHtmlContext = {}): string {
  const t = report.totals;
  const cards: [string, string | number][] = [
    ['notes cited', `${t.cited_notes} of ${t.notes}`],
    ['line coverage', pct(t.line_coverage)],
    ['note-level citations', t.whole_citations],
    ['lore citations', t.lore_citations],
    ['stale citations', t.stale_citations],
    ['unverifiable', t.unverifiable_citations],
    ['artifacts', t.artifacts],
    ['skipped inputs', t.skipped_inputs],
    ['refs counted apart', t.non_lore_refs + t.other_namespace_refs + t.rejected_refs],
    ['unresolved links', t.unresolved_links],
    ['orphan notes', t.orphan_notes],
    ['untouched classes', t.untouched_classes],
  ];
  const cols: { title: string; num: boolean; get: (n: NoteCoverage) => string | number | null; show?: (n: NoteCoverage) => string }[] = [
    { title: 'note', num: false, get: (n) => n.path },
    { title: 'classes', num: false, get: (n) => n.classes.join(' ') },
    { title: 'citations', num: true, get: (n) => n.citations },
    { title: 'note cited', num: true, get: (n) => n.whole_citations },
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
  const folderClasses = folderOnlyClasses(report);
  const classRows = (keep: (k: string) => boolean): BarRow[] => report.classes.filter((c) => keep(c.class)).map((c) => ({ key: c.class, label: `${c.class} (${c.cited_notes}/${c.notes})`, group: c }));
  const classChart = report.classes.length === 0 ? '<p class="empty">no classes</p>'
    : `<div id="classes-all">${barChart('chart-classes', 'Line coverage per target class', classRows(() => true))}</div>` +
      `<div id="classes-own" hidden>${classRows((k) => !folderClasses.has(k)).length === 0 ? '<p class="empty">every class only repeats a folder name</p>' : barChart('chart-classes-own', 'Line coverage per target class, folder-name classes folded away', classRows((k) => !folderClasses.has(k)))}</div>`;
  const foldToggle = folderClasses.size === 0 ? '' : `<label class="fold"><input type="checkbox" id="fold-folder-classes"> fold away the ${folderClasses.size} classes that only repeat a folder name</label>`;
  const folderChart = report.folders.length === 0 ? '<p class="empty">no folders</p>' : barChart('chart-folders', 'Line coverage per folder (with subfolders)', report.folders.map((f) => ({ key: f.folder, label: `${f.folder}/ (${f.cited_notes}/${f.notes})`, group: f })));
  const cited = citedNotesFirst(report.notes);
  const citedHtml = cited.length === 0 ? '<p class="empty">no note is cited</p>' : cited.map((n, i) => citedNoteHtml(n, context.noteLines?.get(n.path), i < 5)).join('');
  const graph = context.index ? linkGraph(report, noteLinks(context.index)) : '<p class="empty">no link data</p>';
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
<p class="sub">Vault snapshot <code>${esc(report.snapshot_id)}</code> · <code>${esc(report.schema_version)}</code> · line coverage = share of non-blank body lines inside a cited line range; citations of a whole note or section count as “note cited”, never as lines</p>
<div class="cards">${cards.map(([k, v]) => `<div class="card"><b>${esc(v)}</b><span>${esc(k)}</span></div>`).join('')}</div>
${section('What to act on', 'todo', actionList(report, folderClasses))}
${section(`Cited notes (${cited.length}), most cited first`, 'cited', `<p class="sub">Marked lines are the cited ranges; a little context is shown around them.</p>${citedHtml}`)}
${section('Link graph of the cited notes', 'graph', graph)}
${section('Coverage charts', 'charts', `<p class="legend">Bars: share of non-blank body lines inside cited ranges (green: at least one note cited; grey: none), and under it in blue the share of notes cited at all (figures: lines · notes); hover a row for its full name and figures. Tree: <span style="background:${shade(0, false)}"></span>never cited<span style="background:${shade(0.1, true)}"></span>cited, little text covered<span style="background:${shade(1, true)}"></span>fully covered</p>${foldToggle}<div class="charts"><figure><figcaption>Per target class (cited/notes)</figcaption>${classChart}</figure><figure><figcaption>Per folder, subfolders included (cited/notes)</figcaption>${folderChart}</figure></div>`)}
${section('Vault tree', 'tree-section', `<div id="tree" class="tree">${treeHtml(buildTree(report), report, true)}</div>`)}
${section('Notes', 'notes-section', `<p class="sub">Click a column header to sort; click again to reverse.</p>${notesTable}`)}
${corpusHtml(report)}
${section('Untouched classes and never-cited notes', 'untouched', (report.untouched_classes.length === 0 ? '<p class="empty">every class has a cited note</p>' : `<p>${report.untouched_classes.map((c) => `<code>${esc(c)}</code>`).join(' ')}</p>`) + simpleTable(['class', 'never cited', 'notes'], report.classes.filter((c) => c.never_cited.length > 0).map((c) => [c.class, `${c.never_cited.length}/${c.notes}`, c.never_cited.join(', ')])))}
${section('Stale citations', 'stale', simpleTable(['artifact / pointer', 'ref', 'lines', 'status', 'detail'], report.stale.map((c) => [where(c), c.ref, c.line_start === null ? '–' : `${c.line_start}-${c.line_end}`, c.status, c.detail])))}
${section('Artifacts', 'artifacts', simpleTable(['file', 'kind', 'lore citations', 'stale', 'non-lore', 'other namespace', 'refused', 'snapshot'], report.artifacts.map((a) => [a.file, a.kind, a.lore_citations, a.stale_citations, a.non_lore_refs, a.other_namespace_refs, a.rejected_refs, a.snapshot_matches === null ? 'not recorded' : a.snapshot_matches ? 'matches' : 'differs']), [2, 3, 4, 5, 6]))}
${section('Skipped inputs', 'skipped', simpleTable(['file', 'reason', 'message'], report.skipped.map((s) => [s.file, s.reason, s.message])))}
${section('Refs counted apart', 'apart', simpleTable(['artifact / pointer', 'ref', 'counted as'], [
    ...report.other_namespace_refs.map((r) => [where(r), r.ref, `other namespace (${r.namespace})`]),
    ...report.rejected_refs.map((r) => [where(r), r.ref, `refused: ${r.detail}`]),
    ...report.non_lore_refs.map((r) => [where(r), r.ref, 'not vault lore']),
  ]))}
${section('Vault gaps (all)', 'gaps', `<h3>Unresolved links (${report.gaps.unresolved_links.length})</h3>${simpleTable(['source', 'link', 'target'], report.gaps.unresolved_links.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.target]))}<h3>Ambiguous links (${report.gaps.ambiguous_links.length})</h3>${simpleTable(['source', 'link', 'resolved to', 'candidates'], report.gaps.ambiguous_links.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.resolved_to, g.candidates.join(', ')]))}<h3>Broken heading/block fragments (${report.gaps.broken_fragments.length})</h3>${simpleTable(['source', 'link', 'note', 'fragment'], report.gaps.broken_fragments.map((g) => [`${g.source_path}:${g.line}:${g.column}`, g.raw, g.path, g.fragment]))}<h3>Orphan notes (${report.gaps.orphan_notes.length})</h3>${report.gaps.orphan_notes.length === 0 ? '<p class="empty">none</p>' : `<ul>${report.gaps.orphan_notes.map((p) => `<li><code>${esc(p)}</code></li>`).join('')}</ul>`}`)}
<script>${JS}</script>
</body>
</html>
`;
  return html;
}

/**
 * The markdown summary of an eval results document (`eval/results/<vault>.md`): one table per part
 * (held-out first — the figures to judge by — then dev), a row per query family and ranker; the
 * traversal walks; and, when a `before` document is given, loretrace's figures before → after.
 */
import { FAMILIES } from './run.mjs';

const METRICS = ['hit@1', 'overlap@1', 'overlap@3', 'mrr', 'lines@1'];

/** A figure as printed: 3 decimals, `—` for null. @param {number | null | undefined} x */
const fmt = (x) => (x === null || x === undefined ? '—' : Number.isInteger(x) ? String(x) : x.toFixed(3));

/**
 * @param {any} results an eval results document
 * @param {any} [before] an earlier results document of the same vault (its `label` names it)
 * @returns {string}
 */
export function renderEvalMarkdown(results, before) {
  const v = results.vault;
  const lines = [
    `# Retrieval eval: ${v.namespace} (${v.id})`,
    '',
    `Snapshot \`${v.snapshot_id.slice(0, 12)}\`, ${v.notes} notes, ${v.chunks} chunks; seed ${results.seed}; ` +
      `${results.dev_percent} % of the queries are **dev** (looked at while changing search), the rest **held-out** (reported, never tuned on). ` +
      `Ghostlight files: ${results.ghostlight}. Written by \`npm run eval\` (scripts/eval.mjs); figures explained in docs/EVAL.md.` +
      (results.stem_weight ? ` Stemmed field on: \`stem_weight\` ${results.stem_weight} (docs/EVAL.md "Stemmed field").` : ''),
    '',
  ];
  for (const part of ['held_out', 'dev']) {
    lines.push(`## Search, ${part === 'held_out' ? 'held-out' : 'dev'} part`, '');
    lines.push(`| family | n | ranker | ${METRICS.join(' | ')} |`, `| --- | --- | --- | ${METRICS.map(() => '---').join(' | ')} |`);
    for (const family of [...FAMILIES, 'all']) {
      for (const r of results.rankers) {
        const f = results.search[family][part][r];
        if (!f || f.n === 0) continue;
        lines.push(`| ${family} | ${f.n} | ${r} | ${METRICS.map((m) => fmt(f[m])).join(' | ')} |`);
      }
    }
    lines.push('');
  }
  if (before) {
    lines.push(`## loretrace before → after (${before.label ?? 'before'})`, '');
    lines.push('| family | part | ' + METRICS.slice(0, 4).join(' | ') + ' |', '| --- | --- | ' + METRICS.slice(0, 4).map(() => '---').join(' | ') + ' |');
    for (const family of [...FAMILIES, 'all']) {
      for (const part of ['held_out', 'dev']) {
        const a = before.search?.[family]?.[part]?.loretrace;
        const b = results.search[family][part].loretrace;
        if (!a || !b || b.n === 0) continue;
        lines.push(`| ${family} | ${part} | ${METRICS.slice(0, 4).map((m) => `${fmt(a[m])} → ${fmt(b[m])}`).join(' | ')} |`);
      }
    }
    lines.push('');
  }
  lines.push('## Traversal (library `traverse`, depth-2 walks)', '');
  lines.push('| case | part | refs | recall | added | added cited | precision (added) | stopped by |', '| --- | --- | --- | --- | --- | --- | --- | --- |');
  for (const c of results.traversal.cases) {
    lines.push(`| ${c.id} | ${c.split} | ${c.refs} | ${fmt(c.recall)} | ${c.added} | ${c.added_cited} | ${fmt(c.precision_added)} | ${c.stopped_by} |`);
  }
  const s = results.traversal.summary;
  lines.push('', `Mean recall: held-out ${fmt(s.held_out.mean_recall)}, dev ${fmt(s.dev.mean_recall)}, all ${fmt(s.all.mean_recall)}; ` +
    `mean precision of added notes: held-out ${fmt(s.held_out.mean_precision_added)}, dev ${fmt(s.dev.mean_precision_added)}, all ${fmt(s.all.mean_precision_added)}.`);
  if (before?.traversal?.summary) {
    const b = before.traversal.summary.all;
    lines.push(`Before (${before.label ?? 'before'}): mean recall ${fmt(b.mean_recall)}, mean precision of added notes ${fmt(b.mean_precision_added)}.`);
  }
  const skipped = [...(results.skipped ?? []), ...(results.traversal.skipped ?? [])];
  if (skipped.length) {
    lines.push('', '## Not used', '');
    for (const x of skipped) lines.push(`- ${x.source}: ${x.reason}`);
  }
  lines.push('');
  return lines.join('\n');
}

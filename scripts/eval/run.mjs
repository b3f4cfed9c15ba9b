/**
 * One eval run over one vault: build the set (scripts/eval/sets.mjs, scripts/eval/ghostlight.mjs),
 * rank every query with every ranker (scripts/eval/systems.mjs), judge the hits
 * (scripts/eval/metrics.mjs) and walk every traversal case with the library's `compilePolicy` +
 * `traverse`. Pure of the clock and of absolute paths: the same vault, Ghostlight files, seed and
 * loretrace build give byte-identical results.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { benchQueries, requirementQueriesFrom, sectionQueries } from './sets.mjs';
import { ghostlightRequirementPairs, ghostlightTraversalCases } from './ghostlight.mjs';
import { makeRankers } from './systems.mjs';
import { judge, round4, summarize, walkFigures } from './metrics.mjs';
import { DEV_PERCENT, splitOf } from './split.mjs';

/** Version of the results document (`eval/results/<vault>.json`). */
export const EVAL_RESULTS_VERSION = 'loretrace.eval_results.v1';
/** Version of the committed set document (`eval/sets/<vault>.json`). */
export const EVAL_SET_VERSION = 'loretrace.eval_set.v1';

/** Query families in report order. */
export const FAMILIES = ['section', 'section_mixed', 'requirement', 'known_item', 'name'];

/**
 * @typedef {{ id: string, root: string, sizes: { sections: number, knownItems: number, names: number },
 *   fixtureFiles?: { requirements: string, traversal: string }, ghostlight?: string | null }} VaultSpec
 *   `id`: `fixture` or `aetheria`; `fixtureFiles`: the committed requirement pairs and traversal cases
 *   (repo-relative, read from `repo`); `ghostlight`: the Ghostlight folder whose packets give the real
 *   requirement pairs and traversal cases (null: none)
 */

/**
 * Run the eval on one vault.
 * @param {{ api: any, repo: string, vault: VaultSpec, seed: number, indexDir: string, stemWeight?: number }} options
 *   `api`: loretrace's public API (dist/index.js); `indexDir`: where the index is kept (a temp folder);
 *   `stemWeight`: above 0, the vault is indexed with its config plus this `stem_weight` (search's stemmed
 *   field, docs/INDEX.md), and the results say so (`stem_weight`); 0 or absent: the vault's own config
 * @returns {Promise<{ results: any, set: any }>}
 */
export async function runEval({ api, repo, vault, seed, indexDir, stemWeight = 0 }) {
  const config = stemWeight > 0 ? { ...(await api.loadVaultConfig(vault.root)).config, stem_weight: stemWeight } : undefined;
  const index = await api.indexVault(vault.root, { indexDir, ...(config ? { config } : {}) });
  const { queries, texts, skipped } = await buildSet(api, repo, index, vault, seed);
  const rankers = makeRankers(api, index);
  const outcomes = queries.map((q) => {
    const text = q.query ?? texts.get(q.id);
    const row = { id: q.id };
    for (const r of rankers) row[r.id] = judge(r.rank(text), q.targets);
    return row;
  });
  const traversal = await runTraversal(api, repo, index, vault, seed);
  const results = {
    schema_version: EVAL_RESULTS_VERSION,
    vault: { id: vault.id, namespace: index.namespace, snapshot_id: index.snapshot_id, notes: index.notes.length, chunks: index.chunks.length },
    seed,
    ...(stemWeight > 0 ? { stem_weight: stemWeight } : {}),
    dev_percent: DEV_PERCENT,
    ghostlight: vault.ghostlight ? 'read' : 'not used',
    rankers: rankers.map((r) => r.id),
    search: searchSummary(queries, outcomes, rankers.map((r) => r.id)),
    traversal: { summary: traversalSummary(traversal.cases), cases: traversal.cases, skipped: traversal.skipped },
    skipped,
    per_query: outcomes.map((o) => ({ id: o.id, ...Object.fromEntries(rankers.map((r) => [r.id, { hit1: o[r.id].hit1, rank: o[r.id].rank }])) })),
  };
  const set = {
    schema_version: EVAL_SET_VERSION,
    vault: results.vault,
    seed,
    queries,
    traversal: traversal.cases.map(({ id, split, source, seeds, cited }) => ({ id, split, source, seeds, cited })),
  };
  return { results, set };
}

async function buildSet(api, repo, index, vault, seed) {
  const queries = [...sectionQueries(index, { seed, limit: vault.sizes.sections })];
  let texts = new Map();
  let skipped = [];
  if (vault.fixtureFiles) {
    const doc = JSON.parse(await readFile(join(repo, vault.fixtureFiles.requirements), 'utf8'));
    queries.push(...requirementQueriesFrom(api, index, doc, seed));
  }
  if (vault.ghostlight) {
    const pairs = await ghostlightRequirementPairs(api, index, vault.ghostlight, seed);
    queries.push(...pairs.queries);
    texts = pairs.texts;
    skipped = pairs.skipped;
  }
  queries.push(...(await benchQueries(vault.root, { seed, knownItems: vault.sizes.knownItems, names: vault.sizes.names })));
  return { queries, texts, skipped };
}

/** Figures per family and part (dev, held_out, all), per ranker, plus every family pooled. */
function searchSummary(queries, outcomes, rankerIds) {
  const out = {};
  const groups = [...FAMILIES, 'all'];
  for (const family of groups) {
    const inFamily = (q) => family === 'all' || q.family === family;
    out[family] = {};
    for (const part of ['dev', 'held_out', 'all']) {
      const rows = outcomes.filter((_, i) => inFamily(queries[i]) && (part === 'all' || queries[i].split === part));
      out[family][part] = Object.fromEntries(rankerIds.map((r) => [r, summarize(rows.map((o) => o[r]))]));
    }
  }
  return out;
}

async function runTraversal(api, repo, index, vault, seed) {
  let cases = [];
  let skipped = [];
  if (vault.fixtureFiles) cases.push(...(await fixtureTraversalCases(api, repo, vault.fixtureFiles.traversal, seed)));
  if (vault.ghostlight) {
    const g = await ghostlightTraversalCases(api, index, vault.ghostlight, seed);
    cases.push(...g.cases);
    skipped = g.skipped;
  }
  const walked = cases.map((c) => {
    const compiled = api.compilePolicy(c.policy, { index, packet: c.packet });
    const result = api.traverse(index, compiled, { queries: c.queries });
    const strip = (ref) => ref.slice(ref.indexOf(':') + 1).replace(/#.*$/, '');
    const consulted = result.consulted_refs.map(strip);
    const followed = result.followed_refs.map(strip);
    return {
      id: c.id, split: c.split, source: c.source, seeds: c.seeds, cited: c.cited,
      queries: c.queries.length,
      consulted, followed,
      stopped_by: result.stats.stopped_by ?? null,
      ...walkFigures([...consulted, ...followed], c.seeds, c.cited),
    };
  });
  return { cases: walked, skipped };
}

async function fixtureTraversalCases(api, repo, file, seed) {
  const doc = JSON.parse(await readFile(join(repo, file), 'utf8'));
  const out = [];
  for (const c of doc.cases) {
    let policy = c.policy ?? JSON.parse(await readFile(join(repo, c.policy_file), 'utf8'));
    if (c.override_stop_conditions) policy = { ...policy, stop_conditions: c.override_stop_conditions };
    const queries = c.projected_context_file ? api.requirementQueries(JSON.parse(await readFile(join(repo, c.projected_context_file), 'utf8'))) : [];
    for (const [i, text] of c.queries.entries()) queries.push({ text, used_for: `${file} case ${c.id} query ${i}` });
    const ns = policy.required_seed_refs[0].split(':')[0];
    const id = `traversal:${c.id}`;
    out.push({
      id, split: splitOf(id, seed), source: `${file}#${c.id}`, policy, packet: {}, queries,
      seeds: policy.required_seed_refs.map((r) => r.slice(ns.length + 1)), cited: [...c.cited].sort(),
    });
  }
  return out;
}

/** Mean recall and precision of the walks, per part. */
function traversalSummary(cases) {
  const out = {};
  for (const part of ['dev', 'held_out', 'all']) {
    const rows = cases.filter((c) => part === 'all' || c.split === part);
    const mean = (xs) => (xs.length ? round4(xs.reduce((a, b) => a + b, 0) / xs.length) : null);
    out[part] = {
      cases: rows.length,
      mean_recall: mean(rows.map((c) => c.recall).filter((x) => x !== null)),
      mean_precision_added: mean(rows.map((c) => c.precision_added).filter((x) => x !== null)),
      mean_refs: mean(rows.map((c) => c.refs)),
    };
  }
  return out;
}

/**
 * Eval cases read from the real Ghostlight files (`../shared/ghostlight/`, read-only; never copied into
 * the repository — the committed set names the file and JSON pointer a query's text comes from).
 *
 * - Requirement → excerpt pairs: every `visible_context.source_excerpts[i]` of a packet whose
 *   `source_ref` names a note of the vault (`Namespace:path[#fragment]`, several joined by `;`) — the
 *   excerpt's text is the query, the cited refs are the targets. An excerpt whose `source_ref` is not a
 *   vault ref (a scene digest) counts only when its `ref_id` is exactly the slug of one note's title
 *   (`lucent-media` → *Lucent Media*): the packet then names the entity it summarises; or when it is
 *   the lore digest of a `corpus-coverage.json` entry whose flashpoint is a note (the digest summarises
 *   that flashpoint's lore; the whole note is the target). Identical
 *   (text, targets) pairs of several turns count once.
 * - Requirement-text pairs: every `context.runtime_retrieval_requirements[i]` of a projected context
 *   (`<scene>.projected-context.json`, what `retrieve` queries) whose `prompt_role` is `source_excerpt`,
 *   when the same scene's packet (`<scene>.packet.json`) cites vault lines in its source_excerpts: the
 *   `compact_fact` is the query, the lines those excerpts cite (resolved as above) are the targets.
 * - Traversal cases: (1) each packet with a `traversal_policy`: a walk from its `required_seed_refs`
 *   only (not its `allowed_scope`, which lists the answer), with the scene's own queries (the observed
 *   event and the excerpts that are not lore), scored against the notes the author put in
 *   `allowed_scope` and cited in its lore excerpts; (2) each entry of `corpus-coverage.json` whose
 *   flashpoint (else primary subject) is a note: a walk from that note, scored against the notes of its
 *   flashpoint, primary and secondary subjects (the notes the fixture's author says the scene is about).
 */
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { splitOf } from './split.mjs';

/** `Lucent Media` → `lucent-media`. @param {string} s */
export function slugOf(s) {
  return s.toLowerCase().normalize('NFD').replace(/\p{M}+/gu, '').replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
}

/** Folded name for matching subject names to note titles and aliases. @param {string} s */
const foldName = (s) => slugOf(s);

async function readJson(file) {
  return JSON.parse(await readFile(file, 'utf8'));
}

async function jsonFiles(dir) {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  } catch {
    return [];
  }
}

/**
 * Resolve one cited ref against the index, or null when it is not a ref of this vault.
 * @param {any} api
 * @param {any} index
 * @param {string} ref
 */
function resolveCited(api, index, ref) {
  if (!ref.startsWith(`${index.namespace}:`) || ref.endsWith('/')) return null;
  try {
    const r = api.resolveRef(index, ref);
    return { path: r.path, line_start: r.line_start, line_end: r.line_end };
  } catch {
    return null;
  }
}

/** Notes by folded title and alias (names carried by exactly one note only). @param {any} index */
function notesByName(index) {
  const count = new Map();
  const owner = new Map();
  for (const n of index.notes) {
    for (const name of new Set([n.title, ...n.aliases].map(foldName))) {
      count.set(name, (count.get(name) ?? 0) + 1);
      owner.set(name, n);
    }
  }
  return (name) => (count.get(foldName(name)) === 1 ? owner.get(foldName(name)) : null);
}

/**
 * The flashpoint note of each corpus-coverage entry, by the path of the entry's lore digest
 * (`artifacts.lore_digest`): an excerpt citing that digest summarises the flashpoint's lore.
 * @param {any} index
 * @param {string} ghostlight
 * @returns {Promise<Map<string, any>>}
 */
async function loreDigestNotes(index, ghostlight) {
  const byName = notesByName(index);
  const out = new Map();
  let coverage = null;
  try {
    coverage = await readJson(join(ghostlight, 'corpus-coverage.json'));
  } catch {
    return out;
  }
  for (const entry of coverage?.entries ?? []) {
    const digest = entry?.artifacts?.lore_digest;
    const note = byName(entry?.flashpoint ?? '');
    if (typeof digest === 'string' && note) out.set(digest, note);
  }
  return out;
}

/**
 * Requirement → excerpt pairs of the packets in `<ghostlight>/packets/`.
 * @param {any} api loretrace's public API
 * @param {any} index the real vault's index
 * @param {string} ghostlight folder
 * @param {number} seed
 * @returns {Promise<{ queries: import('./sets.mjs').EvalQuery[], texts: Map<string, string>, skipped: { source: string, reason: string }[] }>}
 *   `texts`: query id → text (kept out of the committed set)
 */
export async function ghostlightRequirementPairs(api, index, ghostlight, seed) {
  const byName = notesByName(index);
  const digests = await loreDigestNotes(index, ghostlight);
  const queries = [];
  const texts = new Map();
  const skipped = [];
  const seen = new Set();
  /** Vault lines one excerpt cites ([] when it cites none). */
  const excerptTargets = (e) => {
    let targets = e.source_ref.split(';').map((s) => resolveCited(api, index, s.trim())).filter(Boolean);
    if (targets.length === 0 && typeof e.ref_id === 'string') {
      const note = byName(e.ref_id.replace(/-/g, ' '));
      if (note && slugOf(note.title) === e.ref_id) targets = [{ path: note.path, line_start: 1, line_end: note.line_count }];
    }
    if (targets.length === 0) {
      const note = digests.get(e.source_ref.trim());
      if (note) targets = [{ path: note.path, line_start: 1, line_end: note.line_count }];
    }
    return targets;
  };
  /** Each packet's cited lines, by the packet file's scene stem (`<stem>.packet.json`). */
  const citedByScene = new Map();
  const add = (text, targets, file, pointer) => {
    const key = JSON.stringify([text, targets]);
    if (seen.has(key)) return;
    seen.add(key);
    const id = `requirement:${file}#${pointer}`;
    texts.set(id, text);
    queries.push({ id, family: 'requirement', split: splitOf(id, seed), query: null, query_source: { file: `ghostlight/${file}`, pointer }, targets });
  };
  for (const file of await jsonFiles(join(ghostlight, 'packets'))) {
    const packet = await readJson(join(ghostlight, 'packets', file));
    const excerpts = packet?.visible_context?.source_excerpts ?? [];
    const cited = [];
    excerpts.forEach((e, i) => {
      const source = `ghostlight/packets/${file}`;
      const pointer = `/visible_context/source_excerpts/${i}/text`;
      if (typeof e?.text !== 'string' || typeof e?.source_ref !== 'string') return;
      const targets = excerptTargets(e);
      if (targets.length === 0) {
        skipped.push({ source: `${source}#${pointer}`, reason: 'source_ref names no note of the vault' });
        return;
      }
      for (const t of targets) if (!cited.some((c) => JSON.stringify(c) === JSON.stringify(t))) cited.push(t);
      // The set's ids and file names keep the form they had before projected contexts were read: the
      // split is a function of the id, so an existing case never moves between dev and held-out.
      const key = JSON.stringify([e.text, targets]);
      if (seen.has(key)) return;
      seen.add(key);
      const id = `requirement:${file}#${pointer}`;
      texts.set(id, e.text);
      queries.push({ id, family: 'requirement', split: splitOf(id, seed), query: null, query_source: { file: source, pointer }, targets });
    });
    if (file.endsWith('.packet.json') && cited.length > 0) citedByScene.set(file.slice(0, -'.packet.json'.length), cited);
  }
  // What `retrieve` really queries: each projected context's runtime requirements. A requirement the
  // scene serves with a source excerpt (`prompt_role` `source_excerpt`) is paired with the vault lines the
  // same scene's packet cites in its excerpts; its compact_fact is the query. A setting constraint is
  // scene-local (it cites a scene digest, not lore) and is listed as not used.
  for (const file of await jsonFiles(join(ghostlight, 'projected-contexts'))) {
    const stem = file.endsWith('.projected-context.json') ? file.slice(0, -'.projected-context.json'.length) : null;
    const cited = stem ? citedByScene.get(stem) : undefined;
    const reqs = (await readJson(join(ghostlight, 'projected-contexts', file)))?.context?.runtime_retrieval_requirements ?? [];
    reqs.forEach((r, i) => {
      const pointer = `/context/runtime_retrieval_requirements/${i}/compact_fact`;
      const where = `ghostlight/projected-contexts/${file}#${pointer}`;
      if (typeof r?.compact_fact !== 'string') return;
      if (!cited) skipped.push({ source: where, reason: 'the same scene\'s packet cites no note of the vault in its source_excerpts' });
      else if (r.prompt_role !== 'source_excerpt') skipped.push({ source: where, reason: `prompt_role ${JSON.stringify(r.prompt_role ?? null)}: not served by the packet's lore excerpts` });
      else add(r.compact_fact, cited, `projected-contexts/${file}`, pointer);
    });
  }
  return { queries, texts, skipped };
}

/**
 * @typedef {{ id: string, split: 'dev' | 'held_out', source: string, policy: any, packet: any,
 *   queries: { text: string, used_for: string }[], seeds: string[], cited: string[] }} TraversalCase
 *   `cited`: vault paths the author cites (seeds included); `packet`: the context compilePolicy gets
 *   (hidden refs only, never `allowed_scope`)
 */

/**
 * Traversal cases from the packets and the corpus coverage ledger (module doc).
 * @param {any} api
 * @param {any} index
 * @param {string} ghostlight
 * @param {number} seed
 * @returns {Promise<{ cases: TraversalCase[], skipped: { source: string, reason: string }[] }>}
 */
export async function ghostlightTraversalCases(api, index, ghostlight, seed) {
  const ns = index.namespace;
  const byName = notesByName(index);
  const cases = [];
  const skipped = [];
  for (const file of await jsonFiles(join(ghostlight, 'packets'))) {
    const packet = await readJson(join(ghostlight, 'packets', file));
    const policy = packet?.lore_access?.traversal_policy;
    if (!policy) continue;
    const cited = new Set();
    for (const ref of packet.lore_access.allowed_scope ?? []) {
      const t = resolveCited(api, index, ref);
      if (t) cited.add(t.path);
    }
    const sceneExcerpts = [];
    for (const e of packet.visible_context?.source_excerpts ?? []) {
      const lore = String(e.source_ref ?? '').split(';').map((s) => resolveCited(api, index, s.trim())).filter(Boolean);
      for (const t of lore) cited.add(t.path);
      if (lore.length === 0) sceneExcerpts.push(e);
    }
    const seeds = policy.required_seed_refs.map((r) => resolveCited(api, index, r)?.path).filter(Boolean);
    for (const s of seeds) cited.add(s);
    const id = `traversal:${file}`;
    cases.push({
      id, split: splitOf(id, seed), source: `ghostlight/packets/${file}`,
      policy: { ...policy, stop_conditions: [...policy.stop_conditions, 'max_refs:12'] },
      packet: { hidden_context_audit: packet.hidden_context_audit },
      queries: api.packetQueries({ visible_context: { ...packet.visible_context, source_excerpts: sceneExcerpts } }),
      seeds, cited: [...cited].sort(),
    });
  }
  let coverage = null;
  try {
    coverage = await readJson(join(ghostlight, 'corpus-coverage.json'));
  } catch {
    coverage = null;
  }
  const contexts = await jsonFiles(join(ghostlight, 'projected-contexts'));
  for (const entry of coverage?.entries ?? []) {
    const source = `ghostlight/corpus-coverage.json#${entry.fixture_id}`;
    const flashpoint = byName(entry.flashpoint ?? '');
    const primary = (entry.primary_subjects ?? []).map(byName).filter(Boolean);
    const seedNotes = flashpoint ? [flashpoint] : primary;
    if (seedNotes.length === 0) {
      skipped.push({ source, reason: 'neither the flashpoint nor a primary subject is a note of the vault' });
      continue;
    }
    const cited = new Set([flashpoint, ...primary, ...(entry.secondary_subjects ?? []).map(byName)].filter(Boolean).map((n) => n.path));
    const queries = [];
    for (const f of contexts.filter((c) => c.startsWith(`${entry.fixture_id}.`))) {
      for (const q of api.requirementQueries(await readJson(join(ghostlight, 'projected-contexts', f)))) {
        if (!queries.some((x) => x.text === q.text)) queries.push(q);
      }
    }
    if (typeof entry.location === 'string') queries.push({ text: entry.location, used_for: 'corpus-coverage location' });
    const id = `traversal:coverage:${entry.fixture_id}`;
    cases.push({
      id, split: splitOf(id, seed), source,
      policy: {
        max_link_depth: 2,
        allowed_prefixes: [`${ns}:Aetheria/Worldbuilding/Pre-Elysium/`, `${ns}:Aetheria/Worldbuilding/Politics/`],
        required_seed_refs: seedNotes.map((n) => `${ns}:${n.path}`),
        follow_link_classes: ['wikilink'],
        stop_conditions: ['max_refs:12', 'stop before post-Elysium or future-outcome lore unless the packet explicitly requests it'],
      },
      packet: {},
      queries,
      seeds: seedNotes.map((n) => n.path),
      cited: [...cited].sort(),
    });
  }
  return { cases, skipped };
}

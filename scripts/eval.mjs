#!/usr/bin/env node
/**
 * `npm run eval` — loretrace's retrieval-quality harness (quality only; speed is `npm run bench`).
 * Runs on the bundled lore-fixtures/FixtureLore always, and on the real Aetheria vault with the
 * Ghostlight packets when `../shared` (or LORETRACE_SHARED) holds them — saying so when it does not.
 * For each vault it writes `<out>/results/<vault>.json` + `.md` and the query set `<out>/sets/<vault>.json`
 * (texts read from Ghostlight files are named by file and JSON pointer, not copied). Deterministic: the
 * same vault, files, seed and build give byte-identical output. `eval/baseline/<vault>.json`, when
 * present, is the "before" of the before → after table.
 *
 * Usage: node scripts/eval.mjs [--vault fixture|aetheria|all] [--out eval] [--seed 16] [--dist dist] [--stem-weight 0] [--check]
 *   (options parsed by scripts/cli-args.mjs; `--help` lists them)
 * Exit: 0 written (or, with --check, identical to what is in <out>); 1 the run failed or --check found a
 * difference; 2 usage error. Documented in docs/EVAL.md.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runEval } from './eval/run.mjs';
import { renderEvalMarkdown } from './eval/report.mjs';
import { InvalidArgumentError } from 'commander';
import { parseScriptArgs, integer, oneOf } from './cli-args.mjs';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = process.env.LORETRACE_SHARED ?? resolve(REPO, '..', 'shared');
const AETHERIA = join(SHARED, 'lore', 'AetheriaLore');
const GHOSTLIGHT = join(SHARED, 'ghostlight');

const { opts: args, fail: usage } = parseScriptArgs('eval', 'node scripts/eval.mjs [options]', [
  { flags: '--vault <v>', description: 'fixture, aetheria or all (all: fixture, plus aetheria when ../shared is present)', value: 'all', shown: 'all', parse: oneOf(['fixture', 'aetheria', 'all']) },
  { flags: '--out <dir>', description: 'output folder: results/<vault>.json|.md, sets/<vault>.json', value: join(REPO, 'eval'), shown: 'eval' },
  { flags: '--seed <n>', description: 'seed of every deterministic choice', value: 16, parse: integer },
  { flags: '--dist <dir>', description: 'loretrace build to evaluate', value: join(REPO, 'dist'), shown: 'dist' },
  { flags: '--stem-weight <w>', description: "index every vault with this stem_weight (0 … 1; 0: the vault's own config) — the stemmed-field trial of docs/EVAL.md", value: 0, parse: unitInterval },
  { flags: '--check', description: 'write nothing; exit 1 unless the output would be identical to what <out> holds', value: false },
  { flags: '--quiet', description: 'no progress on stderr', value: false },
]);
const seed = args.seed;
const log = args.quiet ? () => {} : (line) => process.stderr.write(line + '\n');

const hasShared = existsSync(AETHERIA) && existsSync(GHOSTLIGHT);
const vaults = [];
if (args.vault !== 'aetheria') {
  vaults.push({
    id: 'fixture', root: join(REPO, 'lore-fixtures', 'FixtureLore'), sizes: { sections: 200, knownItems: 60, names: 40 },
    fixtureFiles: { requirements: 'lore-fixtures/eval/requirements.json', traversal: 'lore-fixtures/eval/traversal.json' }, ghostlight: null,
  });
}
if (args.vault !== 'fixture') {
  if (hasShared) vaults.push({ id: 'aetheria', root: AETHERIA, sizes: { sections: 200, knownItems: 200, names: 100 }, ghostlight: GHOSTLIGHT });
  else if (args.vault === 'aetheria') usage(`the real vault is not at ${AETHERIA} (set LORETRACE_SHARED)`);
  else log(`eval: shared data not found at ${SHARED}: evaluating lore-fixtures/ only (set LORETRACE_SHARED to add the real vault)`);
}

const distFile = join(resolve(args.dist), 'index.js');
if (!existsSync(distFile)) usage(`${distFile} not found (run npm run build)`);
// The public API, plus the traversal stage's query builders (requirementQueries, packetQueries), which are
// not part of the public surface.
const api = { ...(await import(pathToFileURL(join(resolve(args.dist), 'traversal', 'index.js')).href)), ...(await import(pathToFileURL(distFile).href)) };
const out = resolve(args.out);
let differences = 0;
let compared = 0;
for (const vault of vaults) {
  const indexDir = await mkdtemp(join(tmpdir(), 'loretrace-eval-'));
  try {
    log(`eval: ${vault.id} (${vault.root})`);
    const { results, set } = await runEval({ api, repo: REPO, vault, seed, indexDir, stemWeight: args.stemWeight });
    const beforeFile = join(out, 'baseline', `${vault.id}.json`);
    const before = existsSync(beforeFile) ? JSON.parse(await readFile(beforeFile, 'utf8')) : null;
    if (before) results.before = { label: before.label ?? null, search: pickFigures(before.search), traversal: before.traversal?.summary ?? null };
    const files = [
      [join(out, 'results', `${vault.id}.json`), formatJson(results, 'per_query')],
      [join(out, 'results', `${vault.id}.md`), renderEvalMarkdown(results, before)],
      [join(out, 'sets', `${vault.id}.json`), formatJson(set, 'queries')],
    ];
    for (const [file, text] of files) {
      if (args.check) {
        compared++;
        const old = existsSync(file) ? await readFile(file, 'utf8') : null;
        if (old !== text) {
          differences++;
          log(`eval: ${file} differs from this run`);
        }
        continue;
      }
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, text);
      log(`eval: wrote ${file}`);
    }
    const f = results.search.all.held_out;
    log(`eval: ${vault.id} held-out overlap@1 loretrace ${f.loretrace['overlap@1']} | plain ${f.plain_bm25['overlap@1']} | whole-note ${f.whole_note_bm25['overlap@1']}`);
  } catch (e) {
    process.stderr.write(`eval: ${vault.id}: ${e instanceof Error ? e.stack ?? e.message : String(e)}\n`);
    process.exitCode = 1;
  } finally {
    await rm(indexDir, { recursive: true, force: true });
  }
}
// The verdict of --check is its result, not progress: printed even with --quiet (stdout when current).
if (args.check && differences > 0) {
  process.stderr.write(`eval --check: ${differences} of ${compared} files differ from this run (listed above without --quiet); run it without --check to rewrite ${args.out}\n`);
  process.exitCode = 1;
} else if (args.check && process.exitCode !== 1) {
  process.stdout.write(`eval --check: ${args.out} is current (${compared} files identical to this run: ${vaults.map((v) => v.id).join(', ')})\n`);
}

/** Parser of `--stem-weight`: a number from 0 to 1. @param {string} text */
function unitInterval(text) {
  const n = Number(text);
  if (text.trim() === '' || !(n >= 0 && n <= 1)) throw new InvalidArgumentError('must be a number from 0 to 1');
  return n;
}

/** The per-family figures of a results document, without per-query rows (the "before" kept in results). */
function pickFigures(search) {
  return search ?? null;
}

/**
 * Pretty JSON (2-space indent, final newline) with the rows of the top-level list `rows` one per line,
 * so a results or set file stays short and diffs line by line per query.
 * @param {Record<string, any>} doc
 * @param {string} rows
 */
function formatJson(doc, rows) {
  const mark = '"\\u0000rows"';
  const text = JSON.stringify({ ...doc, [rows]: '\u0000rows' }, null, 2);
  const list = doc[rows].length ? `[\n    ${doc[rows].map((r) => JSON.stringify(r)).join(',\n    ')}\n  ]` : '[]';
  return text.replace(mark, () => list) + '\n';
}

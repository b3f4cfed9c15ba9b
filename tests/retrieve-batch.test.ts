/**
 * `loretrace retrieve --batch` (src/packet/batch.ts, docs/RETRIEVE.md "Batch") on the corpus of
 * lore-fixtures/batch/ — five drafts in Ghostlight's `packets/` + `projected-contexts/` layout: turn-01 (its
 * projected context in ../projected-contexts/, the batch's --policy), turn-02 (context and own
 * `<id>.policy.json` beside it), turn-03 (not JSON), turn-04 (own policy with a seed the vault lacks), and
 * harbor/ (a responder-lane draft with its own traversal_policy, no context) — and on the real Ghostlight
 * drafts when ../shared is present. Every ok draft's files must be byte for byte what the single
 * `retrieve` writes for it; the summary and every file the same at any concurrency.
 */
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../src/cli/main.js';
import type { BatchSummary } from '../src/packet/batch.js';
import { draftId } from '../src/packet/batch.js';
import { validatePacket } from '../src/contracts/validate.js';
import { outputSchema } from '../src/contracts/schemas.js';
import { indexVault } from '../src/indexer/build.js';
import { retrieveBatch } from '../src/packet/batch.js';
import { AETHERIA, FIXTURE_VAULT, FIXTURES, GHOSTLIGHT, REPO, hasShared, sharedNotice } from './helpers/shared.js';

const CORPUS = 'lore-fixtures/batch';
const POLICY = 'lore-fixtures/packets/brinefall-intake.policy.json';
const P = `${CORPUS}/packets`;

interface Run { code: number; out: string; err: string }

/** Run the CLI in-process from the repository root, with a fixed ledger clock. */
async function run(argv: string[], env: Record<string, string>, isTTY = false): Promise<Run> {
  let out = '';
  let err = '';
  const code = await main(argv, { stdout: (t) => void (out += t), stderr: (t) => void (err += t), env: { SOURCE_DATE_EPOCH: '1735689600', ...env }, cwd: REPO, isTTY });
  return { code, out, err };
}

/** The (pointer, keyword) pairs of a batch summary's errors against schemas/retrieve-batch.schema.json; [] when valid. */
function schemaErrors(summary: unknown): string[][] {
  const fn = outputSchema('retrieve_batch');
  return fn(summary) ? [] : (fn.errors ?? []).map((e) => [e.instancePath, e.keyword]);
}

/** Every file under `dir`: its path relative to `dir` → its bytes as text. */
function filesUnder(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      if (e.isDirectory()) walk(join(d, e.name));
      else out[relative(dir, join(d, e.name))] = readFileSync(join(d, e.name), 'utf8');
    }
  };
  walk(dir);
  return out;
}

describe('retrieve --batch on lore-fixtures/batch', () => {
  let tmp: string;
  let env: Record<string, string>;
  let out: string;
  let first: Run;
  let summary: BatchSummary;
  let files: Record<string, string>;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'loretrace-batch-'));
    env = { LORETRACE_INDEX_DIR: join(tmp, 'index') };
    out = join(tmp, 'run', 'out');
    first = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', CORPUS, '--out-dir', out, '--policy', POLICY, '--concurrency', '1', '--json'], env);
    summary = JSON.parse(first.out) as BatchSummary;
    files = filesUnder(out);
  }, 120_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('reports every draft in corpus order: 3 ok, the broken two failed with their codes, exit 1', () => {
    expect(first.code).toBe(1);
    expect(first.err).toBe('');
    expect(summary.schema_version).toBe('loretrace.retrieve_batch.v1');
    expect(summary.ok).toBe(false);
    expect(summary.totals).toEqual({ packets: 5, ok: 3, failed: 2, skipped: 0 });
    expect(schemaErrors(summary)).toEqual([]);
    expect(summary.packets.map((p) => [p.packet, p.status, p.projected_context, p.policy, p.lane ?? p.error?.['code']])).toEqual([
      [`${P}/brinefall-intake.turn-01.mara-voss.draft.packet.json`, 'ok', `${CORPUS}/projected-contexts/brinefall-intake.turn-01.mara-voss.projected-context.json`, POLICY, 'coordinator_scoped_retrieval'],
      [`${P}/brinefall-intake.turn-02.mara-voss.draft.packet.json`, 'ok', `${P}/brinefall-intake.turn-02.mara-voss.projected-context.json`, `${P}/brinefall-intake.turn-02.mara-voss.policy.json`, 'coordinator_scoped_retrieval'],
      [`${P}/brinefall-intake.turn-03.mara-voss.draft.packet.json`, 'failed', null, POLICY, 'bad_json'],
      [`${P}/brinefall-intake.turn-04.mara-voss.draft.packet.json`, 'failed', null, `${P}/brinefall-intake.turn-04.mara-voss.policy.json`, 'seed_not_found'],
      [`${P}/harbor/brinefall-berths.dock-warden-ilse.packet.json`, 'ok', null, POLICY, 'responder_scoped_repository_search'],
    ]);
    expect(summary.packets.map((p) => p.packet_id ?? null)).toEqual([
      'brinefall-intake.turn-01.mara-voss.packet.loretrace-coordinator.v1',
      'brinefall-intake.turn-02.mara-voss.packet.loretrace-coordinator.v1',
      null,
      null,
      'proxy-fixture.brinefall-berths.dock_warden_ilse.packet.research.v0.loretrace-research.v1',
    ]);
    // The brinefall draft: 3 trace entries since the walk's relevance stop leaves out Harbor Neutrality (tests/retrieve.test.ts).
    expect(summary.packets.map((p) => p.stats?.['trace_entries'] ?? null)).toEqual([3, 2, null, null, 0]);
    expect(summary.packets[2]?.error).toMatchObject({ code: 'bad_json', file: `${P}/brinefall-intake.turn-03.mara-voss.draft.packet.json`, line: 8 });
    expect(summary.packets[2]?.error?.['message']).toBe(`${P}/brinefall-intake.turn-03.mara-voss.draft.packet.json is not JSON: control character in string, found "\\n" at line 8, column 92`);
    expect(summary.packets[3]?.error).toMatchObject({
      code: 'seed_not_found',
      message: 'required seed FixtureLore:World/Politics/Drowned Archive.md (/required_seed_refs/0) is not in vault FixtureLore: no note World/Politics/Drowned Archive.md',
    });
    // The responder lane has no ledger and no capture fragment: the packet and its lock only.
    expect(Object.keys(files)).toEqual([
      'packets/brinefall-intake.turn-01.mara-voss.packet.json',
      'packets/brinefall-intake.turn-01.mara-voss.packet.ledger.jsonl',
      'packets/brinefall-intake.turn-01.mara-voss.packet.lock.json',
      'packets/brinefall-intake.turn-01.mara-voss.packet.lore_access.json',
      'packets/brinefall-intake.turn-02.mara-voss.packet.json',
      'packets/brinefall-intake.turn-02.mara-voss.packet.ledger.jsonl',
      'packets/brinefall-intake.turn-02.mara-voss.packet.lock.json',
      'packets/brinefall-intake.turn-02.mara-voss.packet.lore_access.json',
      'packets/harbor/brinefall-berths.dock-warden-ilse.packet.json',
      'packets/harbor/brinefall-berths.dock-warden-ilse.packet.lock.json',
    ]);
    expect(summary.packets[0]?.written).toEqual([
      'packet.json', 'packet.ledger.jsonl', 'packet.lore_access.json', 'packet.lock.json',
    ].map((s) => join(out, 'packets', `brinefall-intake.turn-01.mara-voss.${s}`)));
  });

  it('gives the same summary and the same files byte for byte at concurrency 4', async () => {
    rmSync(out, { recursive: true, force: true });
    const again = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', CORPUS, '--out-dir', out, '--policy', POLICY, '--concurrency', '4', '--json'], env);
    expect(again.code).toBe(1);
    expect(again.out).toBe(first.out);
    expect(filesUnder(out)).toEqual(files);
  });

  it('writes for each ok draft exactly the files the single retrieve writes for it', async () => {
    const single = join(tmp, 'run', 'single');
    for (const p of summary.packets.filter((x) => x.status === 'ok')) {
      const outFile = join(single, p.written![0]!.slice(out.length + 1));
      const argv = ['retrieve', '--lore', FIXTURE_VAULT, '--packet', p.packet, '--out', outFile];
      if (p.projected_context) argv.push('--projected-context', p.projected_context);
      if (p.policy) argv.push('--policy', p.policy);
      if (p.lane === 'coordinator_scoped_retrieval') argv.push('--capture-out', outFile.replace(/\.json$/, '.lore_access.json'));
      const r = await run(argv, env);
      expect([r.code, r.err]).toEqual([0, '']);
    }
    expect(filesUnder(single)).toEqual(files);
  });

  it('writes packets that validate, and fragments that verify-trace checks against their ledgers', async () => {
    for (const [name, text] of Object.entries(files).filter(([n]) => /\.packet\.json$/.test(n))) {
      expect([name, validatePacket(JSON.parse(text)).errors]).toEqual([name, []]);
    }
    for (const id of ['brinefall-intake.turn-01.mara-voss', 'brinefall-intake.turn-02.mara-voss']) {
      const base = join(out, 'packets', `${id}.packet`);
      const v = await run(['verify-trace', '--lore', FIXTURE_VAULT, `${base}.lore_access.json`, '--ledger', `${base}.ledger.jsonl`, '--json', '--integrity-only'], env);
      expect(v.code).toBe(0);
      const report = JSON.parse(v.out) as { runner_captured: unknown };
      expect(report.runner_captured).toEqual(id.includes('turn-01') ? { checked: 3, failed: 0, ledger_backed: 3 } : { checked: 2, failed: 0, ledger_backed: 2 });
    }
    const locks = await run(['lock', 'verify', out, '--lore', FIXTURE_VAULT, '--integrity-only'], env);
    expect(locks.code).toBe(0);
  });

  it('refuses to overwrite: a second run, even with --force, fails each ok draft with output_locked and changes no file', async () => {
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', CORPUS, '--out-dir', out, '--policy', POLICY, '--force', '--json'], env);
    expect(r.code).toBe(1);
    const s = JSON.parse(r.out) as BatchSummary;
    expect(s.totals).toEqual({ packets: 5, ok: 0, failed: 5, skipped: 0 });
    expect(s.packets.map((p) => p.error?.['code'])).toEqual(['output_locked', 'output_locked', 'bad_json', 'seed_not_found', 'output_locked']);
    expect(s.packets[0]?.error?.['message']).toBe(
      `the output packet (under --out-dir) ${join(out, 'packets', 'brinefall-intake.turn-01.mara-voss.packet.json')} is listed in the lock ${join(out, 'packets', 'brinefall-intake.turn-01.mara-voss.packet.lock.json')}; a locked file is never overwritten, not even with --force: write the new version elsewhere (a new --out or --out-dir), or delete the earlier run's outputs together with the lock ${join(out, 'packets', 'brinefall-intake.turn-01.mara-voss.packet.lock.json')} (nothing written)`,
    );
    expect(filesUnder(out)).toEqual(files);
  });

  it('names the file an error belongs to in the text line, as the single run does: the policy beside the draft for seed_not_found', async () => {
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', CORPUS, '--out-dir', out, '--policy', POLICY], env);
    const lines = r.out.split('\n');
    expect([r.code, lines.find((l) => l.includes('turn-04')), lines.find((l) => l.includes('turn-03'))]).toEqual([1,
      `  failed   ${P}/brinefall-intake.turn-04.mara-voss.draft.packet.json: required seed FixtureLore:World/Politics/Drowned Archive.md (/required_seed_refs/0) is not in vault FixtureLore: no note World/Politics/Drowned Archive.md (${P}/brinefall-intake.turn-04.mara-voss.policy.json, pointer /required_seed_refs/0) [seed_not_found]`,
      // The error's file is the draft, which the line already names: not repeated.
      `  failed   ${P}/brinefall-intake.turn-03.mara-voss.draft.packet.json is not JSON: control character in string, found "\\n" at line 8, column 92 [bad_json]`]);
  });

  it('runs a list file in its order: a missing path fails with file_not_found, a path listed twice and a built packet are skipped', async () => {
    const list = join(tmp, 'drafts.list');
    writeFileSync(list, [
      readFileSync(join(FIXTURES, 'batch', 'drafts.list'), 'utf8').replace(/^packets\//gm, `${join(FIXTURES, 'batch', 'packets')}/`),
      join(out, 'packets', 'harbor', 'brinefall-berths.dock-warden-ilse.packet.json'),
    ].join(''));
    const listOut = join(tmp, 'list-out');
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', `${CORPUS}/drafts.list`, '--out-dir', listOut, '--policy', POLICY, '--json'], env);
    const s = JSON.parse(r.out) as BatchSummary;
    expect(r.code).toBe(1);
    expect(s.packets.map((p) => [p.packet, p.status, p.error?.['code'] ?? p.reason ?? null])).toEqual([
      [`${P}/brinefall-intake.turn-02.mara-voss.draft.packet.json`, 'ok', null],
      [`${P}/brinefall-intake.turn-01.mara-voss.draft.packet.json`, 'ok', null],
      [`${P}/missing.turn-09.nobody.draft.packet.json`, 'failed', 'file_not_found'],
      [`${P}/brinefall-intake.turn-02.mara-voss.draft.packet.json`, 'skipped', `listed twice: already run as ${P}/brinefall-intake.turn-02.mara-voss.draft.packet.json (line 2)`],
    ]);
    expect(s.totals).toEqual({ packets: 4, ok: 2, failed: 1, skipped: 1 });
    expect(schemaErrors(s)).toEqual([]);
    expect(schemaErrors({ ...s, packets: [{ ...s.packets[3], reason: undefined }] })).not.toEqual([]);
    // Absolute paths in a list file: the outputs go to the top of --out-dir; a built packet is skipped.
    const absOut = join(tmp, 'abs-out');
    const a = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', list, '--out-dir', absOut, '--policy', POLICY, '--json'], env);
    const sa = JSON.parse(a.out) as BatchSummary;
    expect(sa.packets.map((p) => [p.status, p.written?.[0]?.slice(absOut.length + 1) ?? p.error?.['code'] ?? p.reason])).toEqual([
      ['ok', 'brinefall-intake.turn-02.mara-voss.packet.json'],
      ['ok', 'brinefall-intake.turn-01.mara-voss.packet.json'],
      ['failed', 'file_not_found'],
      ['skipped', `listed twice: already run as ${join(FIXTURES, 'batch', 'packets')}/brinefall-intake.turn-02.mara-voss.draft.packet.json (line 2)`],
      ['skipped', 'already a packet built by loretrace retrieve (review.reviewer); pass the draft it was built from'],
    ]);
  });

  it('shows a progress bar on stderr only when it is a terminal', async () => {
    const tty = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', CORPUS, '--out-dir', join(tmp, 'tty-out'), '--policy', POLICY], env, true);
    expect(tty.err).toContain('retrieve ');
    expect(tty.err).toContain('5/5 packets');
    const plain = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', CORPUS, '--out-dir', join(tmp, 'plain-out'), '--policy', POLICY], env);
    expect(plain.err).toBe('');
    expect(plain.out.split('\n').at(-2)).toBe('totals: packets 5, ok 3 (1 with warnings), failed 2, skipped 0 — failed');
  });

  it('refuses bad batch options and an empty corpus with usage-level errors (exit 2)', async () => {
    const empty = join(tmp, 'empty');
    mkdirSync(empty);
    const cases: [string[], string][] = [
      [['--batch', CORPUS, '--packet', 'x.json', '--out-dir', out], "loretrace: --packet cannot be combined with --batch: a batch finds each draft's files by their names and writes under --out-dir; see 'loretrace retrieve --help' [usage]\n"],
      [['--batch', CORPUS], "loretrace: required option '--out-dir <dir>' not specified (--batch writes every draft's outputs under it); see 'loretrace retrieve --help' [usage]\n"],
      [['--batch', CORPUS, '--out-dir', out, '--concurrency', '0'], "loretrace: --concurrency must be an integer from 1 to 64 (got \"0\"); see 'loretrace retrieve --help' [usage]\n"],
      [['--out-dir', out, '--packet', 'x.json', '--out', 'y.json'], "loretrace: --out-dir applies to --batch only; a single run writes --out; see 'loretrace retrieve --help' [usage]\n"],
      [['--out', 'y.json'], "loretrace: required option '--packet <draft.json>' not specified (or --batch <dir-or-list>); see 'loretrace retrieve --help' [usage]\n"],
      [['--batch', empty, '--out-dir', out], `loretrace: ${empty} names no draft packet; expected a folder holding *.packet.json files (searched recursively) [empty_batch]\n`],
      [['--batch', join(tmp, 'nope.list'), '--out-dir', out], `loretrace: cannot read ${join(tmp, 'nope.list')}: no such file [file_not_found]\n`],
    ];
    for (const [argv, err] of cases) {
      const r = await run(['retrieve', '--lore', FIXTURE_VAULT, ...argv], env);
      expect([argv, r.code, r.out, r.err]).toEqual([argv, 2, '', err]);
    }
  });

  it('as a library call: one index, progress once per draft, output folder inside the corpus never walked', async () => {
    const corpus = join(tmp, 'corpus');
    mkdirSync(join(corpus, 'packets'), { recursive: true });
    mkdirSync(join(corpus, 'projected-contexts'));
    for (const f of ['packets/brinefall-intake.turn-01.mara-voss.draft.packet.json', 'projected-contexts/brinefall-intake.turn-01.mara-voss.projected-context.json']) {
      writeFileSync(join(corpus, f), readFileSync(join(FIXTURES, 'batch', f)));
    }
    const index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
    const progress: string[] = [];
    const options = { corpus: 'corpus', outDir: 'corpus/out', policy: join(FIXTURES, 'packets', 'brinefall-intake.policy.json'), onProgress: (p: { done: number; total: number; status: string }) => void progress.push(`${p.done}/${p.total} ${p.status}`) };
    const s = await retrieveBatch(index, options, { cwd: tmp, now: () => new Date(0) });
    expect([s.totals, progress]).toEqual([{ packets: 1, ok: 1, failed: 0, skipped: 0 }, ['1/1 ok']]);
    expect(s.packets[0]?.written).toEqual(['packet.json', 'packet.ledger.jsonl', 'packet.lore_access.json', 'packet.lock.json'].map((x) => `corpus/out/packets/brinefall-intake.turn-01.mara-voss.${x}`));
    // A second run: the built packet under corpus/out/ is not a draft of the corpus (the folder is skipped).
    const again = await retrieveBatch(index, options, { cwd: tmp, now: () => new Date(0) });
    expect(again.packets.map((p) => [p.packet, p.error?.['code']])).toEqual([['corpus/packets/brinefall-intake.turn-01.mara-voss.draft.packet.json', 'output_locked']]);
    await expect(retrieveBatch(index, { ...options, concurrency: 0 }, { cwd: tmp })).rejects.toMatchObject({ code: 'usage', exitCode: 2 });
  });

  it('runs a Ghostlight research packet (*.packet.research.v0.json) the folder walk finds, as a single run builds it: files are told by content, not name', async () => {
    const corpus = join(tmp, 'research-corpus');
    mkdirSync(join(corpus, 'packets'), { recursive: true });
    mkdirSync(join(corpus, 'projected-contexts'));
    for (const f of ['packets/brinefall-intake.turn-01.mara-voss.draft.packet.json', 'projected-contexts/brinefall-intake.turn-01.mara-voss.projected-context.json']) {
      writeFileSync(join(corpus, f), readFileSync(join(FIXTURES, 'batch', f)));
    }
    writeFileSync(join(corpus, 'packets', 'proxy-fixture.dock_warden_ilse.packet.research.v0.json'), readFileSync(join(FIXTURES, 'packets', 'proxy-fixture-research.packet.json')));
    const index = await indexVault(FIXTURE_VAULT, { indexDir: join(tmp, 'index') });
    const s = await retrieveBatch(index, { corpus: 'research-corpus', outDir: 'research-out', policy: join(FIXTURES, 'packets', 'brinefall-intake.policy.json') }, { cwd: tmp, now: () => new Date(0) });
    expect(s.totals).toEqual({ packets: 2, ok: 2, failed: 0, skipped: 0 });
    expect(s.packets.map((p) => [p.packet, p.status, p.lane, p.written?.[0]])).toEqual([
      ['research-corpus/packets/brinefall-intake.turn-01.mara-voss.draft.packet.json', 'ok', 'coordinator_scoped_retrieval', 'research-out/packets/brinefall-intake.turn-01.mara-voss.packet.json'],
      // Its own mode and traversal_policy, as `retrieve --packet` without --lane: the --policy is not used.
      ['research-corpus/packets/proxy-fixture.dock_warden_ilse.packet.research.v0.json', 'ok', 'responder_scoped_repository_search', 'research-out/packets/proxy-fixture.dock_warden_ilse.packet.json'],
    ]);
    expect(s.packets[1]!.findings?.map((f) => f.code)).toContain('policy_option_ignored');
    expect(schemaErrors(s)).toEqual([]);
    // What the batch wrote for it is what a single run writes.
    const single = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', join(corpus, 'packets', 'proxy-fixture.dock_warden_ilse.packet.research.v0.json'), '--out', join(tmp, 'research-single', 'p.json')], { LORETRACE_INDEX_DIR: join(tmp, 'index') });
    expect(single.code).toBe(0);
    expect(readFileSync(join(tmp, 'research-single', 'p.json'), 'utf8')).toBe(readFileSync(join(tmp, 'research-out', 'packets', 'proxy-fixture.dock_warden_ilse.packet.json'), 'utf8'));
  });

  it('names a draft by Ghostlight\'s file naming: <id> without .json, .packet and .draft', () => {
    expect(draftId('brinefall-intake.turn-01.mara-voss.draft.packet.json')).toBe('brinefall-intake.turn-01.mara-voss');
    expect(draftId('pallas-training-loop-v0.turn-01.nara-7.packet.json')).toBe('pallas-training-loop-v0.turn-01.nara-7');
    expect(draftId('scene-02-sanctuary-intake.sella_ren.packet.research.v0.json')).toBe('scene-02-sanctuary-intake.sella_ren');
  });
});

describe('retrieve --batch --policy-dir: per-draft policies, and a policy from another scene is flagged', () => {
  let tmp: string;
  let env: Record<string, string>;
  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'loretrace-batch-policydir-'));
    env = { LORETRACE_INDEX_DIR: join(tmp, 'index') };
    const dir = join(tmp, 'policies');
    mkdirSync(dir);
    // `brinefall-intake.policy.json` serves every turn of the scene (the longest dotted prefix of the id that has a file).
    writeFileSync(join(dir, 'brinefall-intake.policy.json'), readFileSync(join(REPO, POLICY), 'utf8'));
    // turn-03's own mapping: a policy seeded at a note the brinefall scene never names.
    const offScene = { ...JSON.parse(readFileSync(join(REPO, POLICY), 'utf8')), required_seed_refs: ['FixtureLore:World/Politics/Salvage Law.md'] };
    writeFileSync(join(dir, 'brinefall-intake.turn-03.mara-voss.policy.json'), JSON.stringify(offScene));
  });
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('looks up <dir>/<id>.policy.json, else the longest dotted prefix of <id>; a policy beside the draft still comes first', async () => {
    const list = join(tmp, 'drafts.list');
    writeFileSync(list, [`${REPO}/${P}/brinefall-intake.turn-01.mara-voss.draft.packet.json`, `${REPO}/${P}/brinefall-intake.turn-02.mara-voss.draft.packet.json`].join('\n'));
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', list, '--out-dir', join(tmp, 'out'), '--policy-dir', join(tmp, 'policies'), '--json'], env);
    const summary = JSON.parse(r.out) as BatchSummary;
    expect([r.code, schemaErrors(summary)]).toEqual([0, []]);
    expect(summary.policy_dir).toBe(join(tmp, 'policies'));
    expect(summary.policy).toBeNull();
    expect(summary.packets.map((p) => [p.status, p.policy])).toEqual([
      ['ok', `${join(tmp, 'policies')}/brinefall-intake.policy.json`],
      ['ok', `${REPO}/${P}/brinefall-intake.turn-02.mara-voss.policy.json`],
    ]);
    expect(summary.packets.flatMap((p) => p.findings ?? []).filter((f) => f.code === 'policy_seed_off_scene')).toEqual([]);
  }, 120_000);

  it('fails a draft whose policy is off its scene (policy_off_scene); --allow-off-scene-policy builds it with the warning under its line', async () => {
    const dir = join(tmp, 'policies');
    const draftDir = join(tmp, 'corpus');
    mkdirSync(draftDir);
    writeFileSync(join(draftDir, 'brinefall-intake.turn-03.mara-voss.draft.packet.json'), readFileSync(join(REPO, P, 'brinefall-intake.turn-01.mara-voss.draft.packet.json')));
    const policyFile = `${dir}/brinefall-intake.turn-03.mara-voss.policy.json`;
    const draft = `${draftDir}/brinefall-intake.turn-03.mara-voss.draft.packet.json`;
    const finding = `${policyFile}: none of the policy's required seeds (FixtureLore:World/Politics/Salvage Law.md) is on the scene of ${draft}: no allowed_scope entry or source_excerpt names it, and no word of its title or aliases occurs in the draft's prompt; is this the policy of another scene?`;
    const refused = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', draftDir, '--out-dir', join(tmp, 'out3'), '--policy-dir', dir], env);
    expect(refused.code).toBe(1);
    expect(refused.out.split('\n').slice(1)).toEqual([
      `  failed   ${finding} Not built: a packet grounded in another scene's lore is wrong output; give this scene's policy, or pass --allow-off-scene-policy to build it anyway (nothing written) [policy_off_scene]`,
      'totals: packets 1, ok 0, failed 1, skipped 0 — failed',
      '',
    ]);
    expect(existsSync(join(tmp, 'out3'))).toBe(false);
    const allowed = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', draftDir, '--out-dir', join(tmp, 'out4'), '--policy-dir', dir, '--allow-off-scene-policy'], env);
    expect(allowed.code).toBe(0);
    const lines = allowed.out.split('\n');
    expect(lines[1]).toMatch(/^ {2}ok {7}.* \(coordinator_scoped_retrieval, \d+ lore excerpts?, \d+ trace entr(y|ies)\)$/);
    expect(lines.slice(2).filter((l) => l.startsWith('           ')).map((l) => l.trim().split(':')[0])).toEqual(expect.arrayContaining(['warning policy_seed_off_scene']));
    expect(lines.find((l) => l.includes('policy_seed_off_scene'))).toBe(`           warning policy_seed_off_scene: ${finding}`);
    expect(lines.at(-2)).toBe('totals: packets 1, ok 1 (1 with warnings), failed 0, skipped 0 — ok');
  }, 120_000);

  it('refuses a --policy-dir that is not a folder, and --policy-dir without --batch', async () => {
    const r = await run(['retrieve', '--lore', FIXTURE_VAULT, '--batch', CORPUS, '--out-dir', join(tmp, 'out2'), '--policy-dir', join(tmp, 'nowhere')], env);
    expect([r.code, r.err]).toEqual([2, `loretrace: --policy-dir ${join(tmp, 'nowhere')} is not a readable folder; expected a folder of <id>.policy.json files [file_not_found]\n`]);
    const single = await run(['retrieve', '--lore', FIXTURE_VAULT, '--packet', `${P}/brinefall-intake.turn-01.mara-voss.draft.packet.json`, '--out', join(tmp, 'x.json'), '--policy-dir', tmp], env);
    expect([single.code, single.err]).toEqual([2, "loretrace: --policy-dir applies to --batch only; a single run writes --out; see 'loretrace retrieve --help' [usage]\n"]);
  });
});

describe.skipIf(!hasShared)(`retrieve --batch on the real Ghostlight drafts (${hasShared ? 'shared data present' : sharedNotice})`, () => {
  let tmp: string;
  let env: Record<string, string>;
  let summary: BatchSummary;
  let code = -1;
  // One policy per Ghostlight scene: <scene>.policy.json serves every turn of it (--policy-dir's prefix rule).
  const policyDir = 'lore-fixtures/policies/ghostlight';
  const out = () => join(tmp, 'run', 'batch');

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'loretrace-batch-real-'));
    env = { LORETRACE_INDEX_DIR: join(tmp, 'index') };
    const r = await run(['retrieve', '--lore', AETHERIA, '--batch', join(GHOSTLIGHT, 'packets'), '--out-dir', out(), '--policy-dir', policyDir, '--lane', 'coordinator_scoped_retrieval', '--json'], env);
    code = r.code;
    summary = JSON.parse(r.out) as BatchSummary;
  }, 300_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  it('runs the four *.packet.json drafts of packets/, each with its projected context from projected-contexts/, and the Sella research packet as a single run does', () => {
    expect(code).toBe(0);
    expect(summary.totals).toEqual({ packets: 5, ok: 5, failed: 0, skipped: 0 });
    expect(summary.packets.slice(0, 4).map((p) => [p.packet.slice(GHOSTLIGHT.length + 1), p.projected_context?.slice(GHOSTLIGHT.length + 1), p.status])).toEqual([
      'lucent-hostage-feed-v0.turn-06.sol-vant', 'lucent-hostage-feed-v0.turn-14.sol-vant', 'pallas-training-loop-v0.turn-01.nara-7', 'pallas-training-loop-v0.turn-02.ilya-marne',
    ].map((id) => [`packets/${id}.packet.json`, `projected-contexts/${id}.projected-context.json`, 'ok']));
    // A research packet Ghostlight wrote (review.reviewer is not loretrace retrieve) is a draft for the coordinator
    // lane, with its own traversal_policy (no <id>.policy.json in --policy-dir), no projected context.
    expect(summary.packets[4]).toMatchObject({ packet: `${GHOSTLIGHT}/packets/scene-02-sanctuary-intake.sella_ren.packet.research.v0.json`, projected_context: null, policy: null, status: 'ok', lane: 'coordinator_scoped_retrieval' });
    // Each scene's drafts get that scene's policy, and none is off its scene.
    expect(summary.packets.filter((p) => p.status === 'ok').map((p) => p.policy)).toEqual([
      `${policyDir}/lucent-hostage-feed-v0.policy.json`, `${policyDir}/lucent-hostage-feed-v0.policy.json`,
      `${policyDir}/pallas-training-loop-v0.policy.json`, `${policyDir}/pallas-training-loop-v0.policy.json`, null,
    ]);
    expect(summary.packets.flatMap((p) => p.findings ?? []).filter((f) => f.code === 'policy_seed_off_scene')).toEqual([]);
  });

  it('refuses the Pallas policy applied to a Lucent draft (policy_off_scene); --allow-off-scene-policy builds it with the finding', async () => {
    const pallas = 'lore-fixtures/policies/pallas-strikes.policy.json';
    const target = join(tmp, 'offscene', 'lucent.packet.json');
    const refused = await run(['retrieve', '--lore', AETHERIA, '--packet', join(GHOSTLIGHT, 'packets', 'lucent-hostage-feed-v0.turn-06.sol-vant.packet.json'), '--policy', pallas, '--out', target, '--json'], env);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/^loretrace: lore-fixtures\/policies\/pallas-strikes\.policy\.json: none of the policy's required seeds .* Not built: a packet grounded in another scene's lore is wrong output; give this scene's policy, or pass --allow-off-scene-policy to build it anyway \(nothing written\).*\[policy_off_scene\]\n$/);
    expect(existsSync(target)).toBe(false);
    const r = await run(['retrieve', '--lore', AETHERIA, '--packet', join(GHOSTLIGHT, 'packets', 'lucent-hostage-feed-v0.turn-06.sol-vant.packet.json'), '--policy', pallas, '--out', target, '--json', '--allow-off-scene-policy'], env);
    expect(r.code).toBe(0);
    const findings = (JSON.parse(r.out) as { findings: { code: string; path: string; pointer: string }[] }).findings;
    expect(findings.filter((f) => f.code === 'policy_seed_off_scene').map((f) => [f.path, f.pointer])).toEqual([[pallas, '/required_seed_refs']]);
  }, 120_000);

  it('writes packets valid against Ghostlight\'s original responder-packet schema, byte for byte what single retrieve writes', async () => {
    const schema = new Ajv2020({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(join(GHOSTLIGHT, 'schemas', 'responder-packet.schema.json'), 'utf8')));
    const batchFiles = filesUnder(out());
    for (const p of summary.packets.filter((x) => x.status === 'ok')) {
      const packetText = batchFiles[draftId(p.packet) + '.packet.json'];
      expect(packetText).toBeDefined();
      expect([p.packet, schema(JSON.parse(packetText!)), schema.errors ?? null]).toEqual([p.packet, true, null]);
      const single = join(tmp, 'run', 'single', `${draftId(p.packet)}.packet.json`);
      const r = await run(['retrieve', '--lore', AETHERIA, '--packet', p.packet, ...(p.projected_context !== null ? ['--projected-context', p.projected_context] : []), ...(p.policy !== null ? ['--policy', p.policy] : []), '--lane', 'coordinator_scoped_retrieval', '--out', single, '--capture-out', single.replace(/\.json$/, '.lore_access.json')], env);
      expect([r.code, r.err]).toEqual([0, '']);
    }
    expect(filesUnder(join(tmp, 'run', 'single'))).toEqual(batchFiles);
    expect(Object.keys(batchFiles).length).toBe(20);
    expect(existsSync(join(out(), 'pallas-training-loop-v0.turn-01.nara-7.packet.lock.json'))).toBe(true);
  }, 300_000);
});

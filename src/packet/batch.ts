/**
 * Batch retrieval (docs/RETRIEVE.md "Batch"): every draft packet of a corpus through one `retrieve` run
 * each, over ONE open index, a few at a time (p-limit), with one summary. The algorithm:
 *
 * 1. {@link listBatchDrafts} — the drafts: a folder walked recursively for `*.packet.json` (dot-folders,
 *    `node_modules` and the output folder skipped; names in code-unit order), or a list file of paths;
 * 2. {@link planBatchEntry} — per draft, its companions by Ghostlight's naming: `<id>` is the file name
 *    without `.json`, `.packet` and `.draft`; the projected context `<id>.projected-context.json` beside
 *    the draft or in a sibling `projected-contexts/` folder (Ghostlight's `packets/` + `projected-contexts/`
 *    layout); the policy `<id>.policy.json` beside the draft, else in the policy folder (`<id>` or its
 *    longest dotted prefix: `<scene>.policy.json` serves every turn of a scene), else the batch's one
 *    policy; the outputs
 *    `<out-dir>/<folder>/<id>.packet.json` with the names a single run gives them
 *    (`<id>.packet.lore_access.json`, `<id>.packet.ledger.jsonl`, `<id>.packet.lock.json`);
 * 3. {@link runBatchEntry} — the single run's steps (src/packet/run.ts), so a batch writes exactly the bytes
 *    `loretrace retrieve` writes for the same draft; a failure is that draft's status, never the batch's;
 * 4. {@link retrieveBatch} — all of it, the summary in corpus order whatever the completion order.
 *
 * A draft's status is `ok`, `failed` (its coded error, as the single run would raise it) or `skipped`
 * (listed twice; already a packet built by loretrace retrieve, by its `review.reviewer`: the one content rule,
 * which a single run applies too as `already_built`).
 */
import { readdir, stat } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import pLimit from 'p-limit';
import { LoretraceError, isLoretraceError } from '../errors.js';
import type { Finding } from '../errors.js';
import { decodeUtf8Strict, readInputBytes } from '../contracts/json-input.js';
import type { VaultIndex } from '../types.js';
import { writeAllAtomic } from '../receipts/outputs.js';
import { checkOutputPath } from '../safe-write.js';
import { builtByRetrieve } from './build.js';
import type { RetrievalLane } from './build.js';
import { BATCH_FILE_LABELS, checkRetrieveTargets, planRetrieveOutputs, readRetrieveInputs } from './run.js';
import type { RetrieveRequest, RetrieveRunEnv } from './run.js';

/** `schema_version` of the summary {@link retrieveBatch} returns. */
export const BATCH_SUMMARY_SCHEMA_VERSION = 'loretrace.retrieve_batch.v1';

/** Drafts run at once when {@link RetrieveBatchOptions.concurrency} is not given. */
export const DEFAULT_BATCH_CONCURRENCY = 4;

/** Options of {@link retrieveBatch}. Paths are relative to {@link RetrieveRunEnv.cwd}. */
export interface RetrieveBatchOptions {
  /** A folder (walked recursively for `*.packet.json`) or a list file (one path a line, relative to its folder; blank and `#` lines ignored). */
  corpus: string;
  /** Folder the outputs go to, mirroring each draft's folder under the corpus. */
  outDir: string;
  /** The policy file for every draft that has no `<id>.policy.json` beside it or in `policyDir` (and no traversal_policy of its own). */
  policy?: string;
  /**
   * A folder of per-draft policies (`--policy-dir`): `<id>.policy.json`, else the file of the longest dotted
   * prefix of `<id>` ({@link policyInDir}). Used when the draft has no `<id>.policy.json` beside it; before `policy`.
   */
  policyDir?: string;
  /** Lane for every draft (default as `buildPacket`: the draft's mode). */
  lane?: RetrievalLane;
  /** Refuse policies with any clause short of `enforced` (partially enforced or advisory). */
  strictPolicy?: boolean;
  /** Replace existing outputs no lock lists. */
  force?: boolean;
  /** Build drafts whose policy is off their scene (`RetrieveRequest.allowOffScenePolicy`); else they fail. */
  allowOffScenePolicy?: boolean;
  /** Drafts run at once, an integer ≥ 1 (default {@link DEFAULT_BATCH_CONCURRENCY}). Never changes the results. */
  concurrency?: number;
  /** Called once per draft as it finishes (in completion order; for a progress bar). */
  onProgress?: (progress: { done: number; total: number; packet: string; status: BatchStatus }) => void;
}

/** Status of one draft of a batch. */
export type BatchStatus = 'ok' | 'failed' | 'skipped';

/** One draft found by {@link listBatchDrafts}. */
export interface BatchDraft {
  /** The draft's path as shown and recorded (the corpus path joined with its relative path, POSIX). */
  packet: string;
  /** Absolute path. */
  abs: string;
  /** Folder of its outputs under the output folder (POSIX, `''` for the top). */
  outFolder: string;
  /** 1-based line of the list file that named it, or null in a folder walk. */
  line: number | null;
  /** Set when the walk found the file but does not run it: why (the summary's `skipped` reason). */
  skip?: string;
}

/** One draft's line of the summary. Paths as shown (relative to cwd, POSIX). */
export interface BatchPacketSummary {
  packet: string;
  status: BatchStatus;
  /** The projected context and policy file used, or null. */
  projected_context: string | null;
  policy: string | null;
  /** ok: the lane, the built packet's id, buildPacket's stats and findings, and every file written (packet, ledger, fragment, lock). */
  lane?: RetrievalLane;
  packet_id?: string;
  stats?: Record<string, number>;
  findings?: Finding[];
  written?: string[];
  /** failed: the coded error (`LoretraceError.toJSON()`), exactly what the single run would report. */
  error?: Record<string, unknown>;
  /** skipped: why. */
  reason?: string;
}

/** What {@link retrieveBatch} returns (the CLI prints it with `--json`). Deterministic: no times, no concurrency. */
export interface BatchSummary {
  schema_version: typeof BATCH_SUMMARY_SCHEMA_VERSION;
  /** True when no draft failed. */
  ok: boolean;
  namespace: string;
  snapshot_id: string;
  corpus: string;
  out_dir: string;
  policy: string | null;
  /** The folder of per-draft policies (`--policy-dir`), or null. */
  policy_dir: string | null;
  /** Counts with zeros (seed 003: an omitted total is indistinguishable from zero). */
  totals: { packets: number; ok: number; failed: number; skipped: number };
  /** One line per draft, in corpus order. */
  packets: BatchPacketSummary[];
}

/** A path as shown: relative to `cwd` when under it, POSIX separators. */
function shown(cwd: string, abs: string): string {
  const rel = relative(cwd, abs);
  return (rel.startsWith('..') || isAbsolute(rel) ? abs : rel).split(sep).join('/');
}

/** Folder names a walk never enters (besides dot-folders). */
const SKIPPED_FOLDERS: ReadonlySet<string> = new Set(['node_modules']);

/**
 * Ghostlight's name for a research packet (`scene-02-sanctuary-intake.sella_ren.packet.research.v0.json`,
 * ../shared/ghostlight/packets). A walk lists it beside `*.packet.json`: whether a file is run is decided by
 * its content, as in a single run (only a packet loretrace retrieve built is skipped, by `review.reviewer`),
 * never by its name — a single `retrieve --packet` builds this file, so the batch does too.
 */
const RESEARCH_PACKET_NAME = /\.packet\.research\.v\d+\.json$/;

/** Walk `dir` for `*.packet.json` and `*.packet.research.v<N>.json`, entries in code-unit order, leaving out `skip` (the output folder). */
async function walkDrafts(dir: string, shownDir: string, rel: string, skip: string, out: BatchDraft[]): Promise<void> {
  const entries = (await readdir(dir, { withFileTypes: true })).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const e of entries) {
    if (e.name.startsWith('.')) continue;
    const abs = join(dir, e.name);
    if (e.isDirectory()) {
      if (!SKIPPED_FOLDERS.has(e.name) && abs !== skip) await walkDrafts(abs, `${shownDir}/${e.name}`, rel === '' ? e.name : `${rel}/${e.name}`, skip, out);
    } else if (e.isFile() && (e.name.endsWith('.packet.json') || RESEARCH_PACKET_NAME.test(e.name))) {
      out.push({ packet: `${shownDir}/${e.name}`, abs, outFolder: rel, line: null });
    }
  }
}

/** The drafts a list file names: one path a line, relative to the list file's folder; blank and `#` lines ignored. */
async function listFileDrafts(abs: string, file: string, env: RetrieveRunEnv): Promise<BatchDraft[]> {
  const bytes = await readInputBytes(abs, file, env.maxInputBytes !== undefined ? { maxBytes: env.maxInputBytes } : {}).catch((e: unknown) => {
    if (isLoretraceError(e) && e.code === 'file_not_found') throw new LoretraceError(e.code, e.message, { file, expected: 'a readable folder of drafts or list file of draft paths' }, 2);
    throw e;
  });
  const shownDir = posix.dirname(file.split(sep).join('/'));
  const out: BatchDraft[] = [];
  decodeUtf8Strict(bytes, file).split(/\r\n|\r|\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    const rel = line.split(sep).join('/');
    const inside = !isAbsolute(rel) && !posix.normalize(rel).startsWith('../');
    out.push({
      packet: isAbsolute(rel) ? rel : posix.join(shownDir, rel),
      abs: resolve(dirname(abs), line),
      outFolder: inside ? posix.dirname(posix.normalize(rel)).replace(/^\.$/, '') : '',
      line: i + 1,
    });
  });
  return out;
}

/**
 * Step 1: the drafts of a corpus, in corpus order — a folder walked recursively (see the module comment;
 * `outDir` is never entered), or a list file.
 * @throws LoretraceError `file_not_found` (exit 2) when the corpus cannot be read; `not_utf8`,
 *   `input_too_large` (exit 2) for a list file; `empty_batch` (exit 2) when it names no draft.
 */
export async function listBatchDrafts(corpus: string, outDir: string, env: RetrieveRunEnv): Promise<BatchDraft[]> {
  const abs = resolve(env.cwd, corpus);
  let isDir = false;
  try {
    isDir = (await stat(abs)).isDirectory();
  } catch {
    isDir = false;
  }
  let drafts: BatchDraft[];
  if (isDir) {
    drafts = [];
    await walkDrafts(abs, corpus.split(sep).join('/').replace(/\/+$/, '') || '.', '', resolve(env.cwd, outDir), drafts);
  } else {
    drafts = await listFileDrafts(abs, corpus, env);
  }
  if (drafts.length === 0) {
    throw new LoretraceError('empty_batch', `${corpus} names no draft packet; expected ${isDir ? 'a folder holding *.packet.json files (searched recursively)' : 'a list file with one draft packet path a line'}`, { file: corpus, expected: 'at least one draft packet' }, 2);
  }
  return drafts;
}

/**
 * `<id>` of a draft file: its name without `.json`, then without a trailing `.packet` (or Ghostlight's
 * `.packet.research.v<N>`), then `.draft`.
 */
export function draftId(file: string): string {
  return basename(file).replace(/\.json$/i, '').replace(/\.packet(?:\.research\.v\d+)?$/, '').replace(/\.draft$/, '');
}

/** True when the file exists (any kind). */
async function exists(abs: string): Promise<boolean> {
  try {
    await stat(abs);
    return true;
  } catch {
    return false;
  }
}

/** A companion file as shown: the draft's shown folder joined with a path relative to the draft's folder. */
function besideShown(draft: BatchDraft, rel: string): string {
  return posix.join(posix.dirname(draft.packet), rel);
}

/**
 * The policy `--policy-dir` gives a draft: `<dir>/<id>.policy.json`, else the file named by the longest
 * dotted prefix of `<id>` that has one (`pallas-training-loop-v0.turn-01.nara-7` → `…turn-01.policy.json` →
 * `pallas-training-loop-v0.policy.json`: Ghostlight ids are `<scene>.<turn>.<agent>`, so one file can serve a
 * whole scene), as shown (`dir` joined with the name, POSIX); undefined when none exists.
 */
export async function policyInDir(dir: string, id: string, env: RetrieveRunEnv): Promise<string | undefined> {
  const parts = id.split('.');
  for (let n = parts.length; n >= 1; n--) {
    const name = `${parts.slice(0, n).join('.')}.policy.json`;
    if (await exists(resolve(env.cwd, dir, name))) return posix.join(dir.split(sep).join('/'), name);
  }
  return undefined;
}

/**
 * Step 2: the single-run request of one draft — its projected context and policy by the naming rules of
 * the module comment, its outputs under `outDir`. Reads nothing but the existence of companions.
 */
export async function planBatchEntry(draft: BatchDraft, options: RetrieveBatchOptions, env: RetrieveRunEnv): Promise<RetrieveRequest> {
  const id = draftId(draft.abs);
  const folder = dirname(draft.abs);
  let projectedContext: string | undefined;
  for (const rel of [`${id}.projected-context.json`, `../projected-contexts/${id}.projected-context.json`]) {
    if (await exists(join(folder, rel))) {
      projectedContext = besideShown(draft, rel);
      break;
    }
  }
  const ownPolicy = (await exists(join(folder, `${id}.policy.json`))) ? besideShown(draft, `${id}.policy.json`) : undefined;
  const policy = ownPolicy ?? (options.policyDir !== undefined ? await policyInDir(options.policyDir, id, env) : undefined) ?? options.policy;
  const outBase = shown(env.cwd, resolve(env.cwd, options.outDir, draft.outFolder));
  const out = posix.join(outBase, `${id}.packet.json`);
  return {
    packet: draft.packet,
    ...(projectedContext !== undefined ? { projectedContext } : {}),
    ...(policy !== undefined ? { policy } : {}),
    ...(options.lane !== undefined ? { lane: options.lane } : {}),
    strictPolicy: options.strictPolicy === true,
    out,
    captureOut: posix.join(outBase, `${id}.packet.lore_access.json`),
    force: options.force === true,
    ...(options.allowOffScenePolicy === true ? { allowOffScenePolicy: true } : {}),
    responderLane: 'omit',
    labels: BATCH_FILE_LABELS,
  };
}

/**
 * Step 3: one draft's run — read its inputs, skip a packet loretrace retrieve already built, refuse its
 * output paths, build, record, write (src/packet/run.ts). A failure becomes the draft's `failed` status with
 * its coded error; an error that is not a LoretraceError (a bug) becomes `internal_error` with its message.
 */
export async function runBatchEntry(index: VaultIndex, request: RetrieveRequest, env: RetrieveRunEnv): Promise<BatchPacketSummary> {
  const base = { packet: request.packet, projected_context: request.projectedContext ?? null, policy: request.policy ?? null };
  try {
    const inputs = await readRetrieveInputs(request, env);
    if (builtByRetrieve(inputs.draft.value)) {
      return { ...base, status: 'skipped', reason: 'already a packet built by loretrace retrieve (review.reviewer); pass the draft it was built from' };
    }
    await checkRetrieveTargets(request, env);
    const plan = await planRetrieveOutputs(index, inputs, request, env);
    await writeAllAtomic(plan.targets);
    const { result } = plan;
    return {
      ...base,
      status: 'ok',
      lane: result.lane,
      packet_id: result.packet.packet_id,
      stats: { ...result.stats },
      findings: result.findings,
      written: plan.targets.map((t) => shown(env.cwd, t.abs)),
    };
  } catch (e) {
    const error = isLoretraceError(e) ? e.toJSON() : { code: 'internal_error', message: `unexpected error: ${(e as Error)?.message ?? String(e)}` };
    return { ...base, status: 'failed', error };
  }
}

/** A draft that cannot run as planned: named twice, or its outputs are another draft's. */
function conflictOf(draft: BatchDraft, request: RetrieveRequest, seen: { byAbs: Map<string, BatchDraft>; byOut: Map<string, BatchDraft> }, cwd: string): BatchPacketSummary | null {
  const base = { packet: request.packet, projected_context: request.projectedContext ?? null, policy: request.policy ?? null };
  const twice = seen.byAbs.get(draft.abs);
  if (twice !== undefined) {
    return { ...base, status: 'skipped', reason: `listed twice: already run as ${twice.packet}${twice.line !== null ? ` (line ${twice.line})` : ''}` };
  }
  seen.byAbs.set(draft.abs, draft);
  const outAbs = resolve(cwd, request.out);
  const other = seen.byOut.get(outAbs);
  if (other !== undefined) {
    const error = new LoretraceError('output_conflict', `${request.packet} would write ${request.out}, the output of ${other.packet}; expected drafts with distinct <id> per folder (nothing written)`, { file: request.packet, expected: 'one draft per output name' }, 1);
    return { ...base, status: 'failed', error: error.toJSON() };
  }
  seen.byOut.set(outAbs, draft);
  return null;
}

/**
 * `--policy-dir` must be a folder: a typo would otherwise silently fall back to `--policy` for every draft.
 * @throws LoretraceError `file_not_found` (exit 2).
 */
async function checkPolicyDir(dir: string, env: RetrieveRunEnv): Promise<void> {
  let isDir = false;
  try {
    isDir = (await stat(resolve(env.cwd, dir))).isDirectory();
  } catch {
    isDir = false;
  }
  if (!isDir) throw new LoretraceError('file_not_found', `--policy-dir ${dir} is not a readable folder; expected a folder of <id>.policy.json files`, { file: dir, expected: 'a folder of <id>.policy.json files' }, 2);
}

/**
 * Retrieve every draft of a corpus over one open index (steps 1–4 of the module comment) and return the
 * summary. `env`: the folder relative paths are resolved against (default the process's), the input cap
 * and the ledger clock (as a single run's). Runs at most `concurrency` drafts at once; the summary, like every file written, is the same
 * whatever the concurrency or the order drafts finish in. Each draft's outputs obey the single run's rules:
 * never overwritten unless `force`, never when a lock lists them, all of a draft's files or none.
 *
 * @throws LoretraceError only for the batch as a whole: `usage` (exit 2) for a concurrency that is not an
 *   integer ≥ 1; `file_not_found` (exit 2) for a `policyDir` that is not a folder; the errors of
 *   {@link listBatchDrafts}. A draft's own failure is its status.
 */
export async function retrieveBatch(index: VaultIndex, options: RetrieveBatchOptions, env: RetrieveRunEnv = { cwd: process.cwd() }): Promise<BatchSummary> {
  const concurrency = options.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
  if (!Number.isSafeInteger(concurrency) || concurrency < 1) {
    throw new LoretraceError('usage', `concurrency must be an integer ≥ 1 (got ${JSON.stringify(concurrency)})`, { expected: 'an integer ≥ 1' }, 2);
  }
  if (options.policyDir !== undefined) await checkPolicyDir(options.policyDir, env);
  // An --out-dir whose folders cannot be made is refused before any draft is read (output_unwritable).
  checkOutputPath(join(resolve(env.cwd, options.outDir), 'packet.json'), `--out-dir ${options.outDir}`);
  const drafts = await listBatchDrafts(options.corpus, options.outDir, env);
  const requests = await Promise.all(drafts.map((d) => (d.skip !== undefined ? null : planBatchEntry(d, options, env))));
  const seen = { byAbs: new Map<string, BatchDraft>(), byOut: new Map<string, BatchDraft>() };
  const conflicts = drafts.map((d, i): BatchPacketSummary | null => (d.skip !== undefined
    ? { packet: d.packet, projected_context: null, policy: null, status: 'skipped', reason: d.skip }
    : conflictOf(d, requests[i] as RetrieveRequest, seen, env.cwd)));
  const limit = pLimit(concurrency);
  let done = 0;
  const packets = await Promise.all(drafts.map((d, i) => limit(async (): Promise<BatchPacketSummary> => {
    const line = conflicts[i] ?? (await runBatchEntry(index, requests[i] as RetrieveRequest, env));
    done += 1;
    options.onProgress?.({ done, total: drafts.length, packet: d.packet, status: line.status });
    return line;
  })));
  const count = (s: BatchStatus) => packets.filter((p) => p.status === s).length;
  return {
    schema_version: BATCH_SUMMARY_SCHEMA_VERSION,
    ok: count('failed') === 0,
    namespace: index.namespace,
    snapshot_id: index.snapshot_id,
    corpus: options.corpus,
    out_dir: options.outDir,
    policy: options.policy ?? null,
    policy_dir: options.policyDir ?? null,
    totals: { packets: packets.length, ok: count('ok'), failed: count('failed'), skipped: count('skipped') },
    packets,
  };
}

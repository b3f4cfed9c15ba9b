/**
 * `indexVault(root, options)`: scan → parse (only what changed, in worker threads) → search postings →
 * persist → the in-memory {@link VaultIndex}.
 *
 * Incremental rules (docs/INDEX.md "Incremental indexing"):
 * - A note whose path and sha256 are in the previous manifest is not re-parsed (`stats.reused`); any other
 *   note is parsed (`stats.parsed`); notes of the previous manifest that are gone count as `stats.removed`.
 *   A rename is a removal plus a parse.
 * - Only the record shards holding a changed note are rewritten; the search postings of changed notes are
 *   removed and re-added (fresh doc ids), and only the term shards that changed are rewritten.
 * - Records are loaded when first read: `index.notes`, `index.chunks`, `index.links`, `index.findings` are
 *   lazy properties on a warm or incremental index (a search loads only its term shards and the chunks of
 *   its hits). Links are resolved vault-wide when first read (resolution is a pure function of the notes,
 *   the pending links and the asset list) — in every mode, so a cold, warm or incremental run agree.
 * - A corrupt index, another schema_version, or other options (config, namespace, tokenizer) ⇒ full
 *   rebuild with a warning finding `index_rebuilt` — never a crash, never stale results.
 */
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename, dirname, resolve as resolvePath, sep } from 'node:path';
import { LoretraceError, type Finding } from '../errors.js';
import type { Chunk, LinkRecord, ManifestEntry, NoteRecord, VaultConfig, VaultIndex, VaultPath } from '../types.js';
import { linkFindings, resolveLinkRecords } from '../links/resolve.js';
import { attachSearchSource } from '../search/search.js';
import { recordLineReader } from './record-lines.js';
import type { ShardSource } from '../search/engine.js';
import {
  FIELD_COUNT, PostingsBuilder, combineShards, decodeMeta, decodeShard, encodeMeta, encodeShard, shardHasAny, type CompactShard, type DocNote, type LoadedMeta,
} from '../search/postings.js';
import { TOKENIZER_VERSION } from '../search/tokenize.js';
import { loadVaultConfig } from '../vault/config.js';
import { PARSER_VERSION } from '../notes/parse.js';
import { sha256Hex } from '../vault/hash.js';
import { compareCodeUnits, scanVault, vaultRoot, type ScannedFile, type ScanResult } from '../vault/scan.js';
import { ColdSink } from './cold.js';
import { recordDiskNames, recordFileFindings, recordOverCapNotes } from './lookup.js';
import { parseAll, parseBatch, type ParseJob, type ParsedBatch, type ParsedLines } from './parse-pool.js';
import {
  CorruptIndexError, INDEX_SCHEMA_VERSION, canonicalHash, commitManifest, defaultIndexDir, ensureIndexDir, readDataBytesSync,
  readManifest, readState, shardCountFor, shardOf, snapshotId, writeData, writeState,
  type IndexManifest, type ShardFile, type StatState,
} from './store.js';
/** Options of {@link indexVault}. */
export interface IndexOptions {
  /** Ref namespace; default: config `namespace`, else the vault folder's name. */
  namespace?: string;
  /** Config file (`--config`); default `<root>/loretrace.config.json` when present. */
  configPath?: string;
  /** A config object to use instead of reading one (tests, library callers). */
  config?: VaultConfig;
  /** Index directory; default `LORETRACE_INDEX_DIR`, else the per-vault user cache folder. */
  indexDir?: string;
  /** `false`: build in memory only, read and write nothing but the vault. Default true. */
  persist?: boolean;
  /** Environment for LORETRACE_INDEX_DIR / XDG_CACHE_HOME / HOME; default `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Directory relative `root`/`configPath` are resolved against; default `process.cwd()`. */
  cwd?: string;
  /** Parse in worker threads: `auto` (default, see src/indexer/parse-pool.ts), `true`, `false`. */
  workers?: boolean | 'auto';
  /** Progress of the slow phases (for a CLI progress bar): `parse` counts notes parsed. */
  onProgress?: (event: { phase: 'parse'; done: number; total: number }) => void;
}

/** Counters of one {@link indexVault} run (read them with {@link indexStats}). */
export interface IndexStats {
  /** Notes in the index. */
  notes: number;
  chunks: number;
  links: number;
  /** Links whose resolution is `unresolved` / `ambiguous` / `broken_fragment` (reading these resolves links). */
  unresolved: number;
  ambiguous: number;
  broken_fragments: number;
  /** Notes parsed in this run / taken unchanged from the persisted index / gone since the last run. */
  parsed: number;
  reused: number;
  removed: number;
  /** True when the persisted index was unusable and rebuilt (see finding `index_rebuilt`). */
  rebuilt: boolean;
  /** Index directory used, or null when `persist: false`. */
  index_dir: string | null;
  /** Worker threads used for parsing (0 = in the calling thread). */
  threads: number;
}

const statsOf = new WeakMap<VaultIndex, IndexStats>();
const assetsOf = new WeakMap<VaultIndex, string[]>();

/** The counters of the run that produced `index` (null for an index not built by {@link indexVault}). */
export function indexStats(index: VaultIndex): IndexStats | null {
  return statsOf.get(index) ?? null;
}

/** Non-note files of the vault (paths only, sorted), as found by the scan that built `index`. */
export function vaultAssets(index: VaultIndex): string[] {
  return assetsOf.get(index) ?? [];
}


/** Chunks of a note, by path — the search engine's way to read only the chunks of its hits. */
const chunkReaders = new WeakMap<VaultIndex, (path: VaultPath) => readonly Chunk[]>();
/** Title then aliases of a note, by path — for the search's name match, without loading every note. */
const namesReaders = new WeakMap<VaultIndex, (path: VaultPath) => readonly string[]>();

/**
 * A record shard: on disk (`file`, read on demand) or in memory (`data`, UTF-8, when not saved (yet)).
 * Neither = lost after a failed write (reading it re-parses the vault).
 */
interface ShardRef { file: string | null; data: Buffer | null; lines: number }

/** The three record families of the store, one {@link ShardRef} per record shard. */
interface Families { notes: ShardRef[]; chunks: ShardRef[]; parse_links: ShardRef[] }

/** `{"path":"…",` at the start of a record line → the path (JSON string decoded). */
function linePath(line: string): string {
  let i = 9;
  for (; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c === 92) i++;
    else if (c === 34) break;
  }
  return JSON.parse(line.slice(8, i + 1)) as string;
}

function splitLinesOf(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

function refText(indexDir: string | null, ref: ShardRef): string {
  if (ref.data !== null) return ref.data.toString('utf8');
  if (ref.file === null || indexDir === null) throw new CorruptIndexError('a record shard could not be saved');
  const text = readDataBytesSync(indexDir!, ref.file!).toString('utf8');
  const n = splitLinesOf(text).length;
  if (n !== ref.lines) throw new CorruptIndexError(`data file ${ref.file} has ${n} lines, expected ${ref.lines}`);
  return text;
}

/**
 * Index the vault at `root` (incrementally, when a persisted index exists) and return the in-memory index.
 *
 * @throws LoretraceError `vault_not_found` / `vault_not_a_directory` (exit 2), `config_not_found` /
 *   `bad_config` (exit 2), `index_dir_not_a_directory` (exit 2, {@link checkIndexDir}). Other problems with
 *   single files or the persisted index are findings, never throws.
 */
export async function indexVault(root: string, options: IndexOptions = {}): Promise<VaultIndex> {
  const cwd = options.cwd ?? process.cwd();
  const env = options.env ?? process.env;
  const absRoot = resolvePath(cwd, root);
  const realRoot = await vaultRoot(absRoot); // a missing vault is reported before anything else
  const config: VaultConfig = options.config ?? (await loadVaultConfig(realRoot, { configPath: options.configPath, cwd })).config;
  const namespace = options.namespace ?? config.namespace ?? basename(realRoot).normalize('NFC');
  const persist = options.persist !== false;
  const indexDir = persist ? resolvePath(cwd, options.indexDir ?? defaultIndexDir(realRoot, namespace, env)) : null;
  if (indexDir) await checkIndexDir(indexDir);
  // The trusted keys say who may have written a ledger, nothing about the index: they are not hashed, so
  // adding one rebuilds nothing.
  const { trusted_keys: _trustedKeys, ...indexed } = config;
  const optionsHash = canonicalHash({ schema_version: INDEX_SCHEMA_VERSION, tokenizer: TOKENIZER_VERSION, parser: PARSER_VERSION, namespace, config: indexed });
  const findings: Finding[] = [];

  // Previous index (if usable).
  let prev: IndexManifest | null = null;
  let rebuilt = false;
  if (indexDir) {
    try {
      prev = await readManifest(indexDir);
      if (prev && (prev.options_hash !== optionsHash || prev.root !== realRoot || prev.namespace !== namespace)) {
        const why = prev.root !== realRoot ? `it belongs to vault ${prev.root}` : prev.namespace !== namespace ? `it was built for namespace ${prev.namespace}` : 'it was built with other options (config, namespace or tokenizer)';
        findings.push(rebuiltFinding(indexDir, why));
        prev = null;
        rebuilt = true;
      }
    } catch (e) {
      if (!(e instanceof CorruptIndexError)) throw e;
      findings.push(rebuiltFinding(indexDir, e.message));
      rebuilt = true;
    }
  }
  const state = indexDir && prev ? await readState(indexDir) : null;

  try {
    return await build({ absRoot, config, namespace, optionsHash, indexDir, prev, state, findings, rebuilt, options });
  } catch (e) {
    if (!(e instanceof CorruptIndexError) || !indexDir) throw e;
    const retry = findings.filter((f) => f.code !== 'index_rebuilt');
    retry.unshift(rebuiltFinding(indexDir, e.message));
    return build({ absRoot, config, namespace, optionsHash, indexDir, prev: null, state: null, findings: retry, rebuilt: true, options });
  }
}

/**
 * Refuse an index directory that can never hold an index: the path, or the nearest part of it that
 * exists, is not a directory (a file, say, where `--index-dir` or `LORETRACE_INDEX_DIR` points). Unlike an
 * unwritable directory (`index_not_saved`, a warning: the results are still right), this is a wrong
 * option value, refused before the vault is read, naming the path and what is there.
 *
 * @throws LoretraceError `index_dir_not_a_directory` (exit 2) with `file` = `indexDir`.
 */
async function checkIndexDir(indexDir: string): Promise<void> {
  for (let at = indexDir; ; at = dirname(at)) {
    // ENOTDIR: a part of the path above is a file; the walk up reaches it.
    const st = await stat(at).catch((e: NodeJS.ErrnoException) => (e.code === 'ENOENT' || e.code === 'ENOTDIR' ? null : Promise.reject(e)));
    if (st === null) {
      if (dirname(at) === at) return;
      continue;
    }
    if (st.isDirectory()) return;
    const kind = st.isFile() ? 'a file' : st.isFIFO() ? 'a FIFO' : st.isSocket() ? 'a socket' : 'a device';
    const what = at === indexDir ? `it is ${kind}` : `${at} is ${kind}`;
    throw new LoretraceError('index_dir_not_a_directory', `index directory ${indexDir} is not a directory: ${what}`, {
      file: indexDir,
      expected: 'a directory for the persisted index (created when missing), or a path under one',
    }, 2);
  }
}

function rebuiltFinding(indexDir: string, why: string): Finding {
  return { code: 'index_rebuilt', severity: 'warning', message: `persisted index in ${indexDir} was not used and is rebuilt: ${why}` };
}

interface BuildInput {
  absRoot: string;
  config: VaultConfig;
  namespace: string;
  optionsHash: string;
  indexDir: string | null;
  prev: IndexManifest | null;
  state: StatState | null;
  findings: Finding[];
  rebuilt: boolean;
  options: IndexOptions;
}

interface NoteLineValue { path: string; sha256: string; note: NoteRecord; findings: Finding[] }

/**
 * One indexing run over a known previous index (or none), as the module doc describes it:
 * {@link scanForIndex} (trusting the stat cache for unchanged files), {@link planChanges} (what to
 * parse, reuse and remove), {@link parseChanges} (streamed into a {@link ColdSink} on a cold build),
 * {@link storeChanges} (cold, warm or incremental), {@link refreshStatCache}, then the lazy
 * {@link VaultIndex} with its search source and {@link attachStats}.
 *
 * @throws CorruptIndexError when the persisted index turns out unusable (indexVault then rebuilds cold).
 */
async function build(input: BuildInput): Promise<VaultIndex> {
  const { config, namespace, indexDir, prev, state } = input;
  const scanStarted = Date.now();
  const scan = await scanForIndex(input);
  const files = scan.files;
  const plan = planChanges(prev, scan);
  const jobs = plan.toParse.map((f) => ({ path: f.path, sha256: f.sha256, bytes: f.bytes! }));
  for (const f of files) delete f.bytes; // the jobs (then the workers' buffers) hold the bytes from here on
  const sink = prev ? null : await openColdSink(indexDir, files.length);
  const { batches, threads } = await parseChanges(jobs, sink, input.options, config);

  const manifestFiles: ManifestEntry[] = files.map((f) => ({ path: f.path, size: f.size, sha256: f.sha256 }));
  const snapshot = snapshotId(namespace, manifestFiles, scan.assets);
  const base = { namespace, root: scan.root, optionsHash: input.optionsHash, snapshot, manifestFiles, assets: scan.assets };
  const stored = await storeChanges({ indexDir, prev, sink, base, files, batches, removedPaths: plan.removedPaths, changed: plan.changed });

  const tail: Finding[] = [];
  if (stored.saveFinding) tail.push(stored.saveFinding);
  else {
    const f = await refreshStatCache(indexDir, state, files, plan.rehashed, scanStarted);
    if (f) tail.push(f);
  }

  const index = lazyIndex({
    namespace, root: scan.root, snapshot, manifestFiles, config, files, assets: scan.assets, tooLarge: scan.too_large, indexDir,
    families: stored.families, head: [...input.findings, ...scan.findings], tail,
  });
  attachSearchSource(index, stored.source, chunkReaders.get(index), namesReaders.get(index), bytesHashReaderOf(manifestFiles));
  attachStats(index, {
    notes: files.length, chunks: stored.counts.chunks, links: stored.counts.links, unresolved: 0, ambiguous: 0, broken_fragments: 0,
    parsed: plan.toParse.length, reused: plan.reused, removed: plan.removedPaths.length, rebuilt: input.rebuilt, index_dir: indexDir, threads,
  });
  assetsOf.set(index, scan.assets);
  recordDiskNames(index, diskNamesOf(scan.root, scan.files));
  recordOverCapNotes(index, scan.too_large);
  return index;
}

/** Stat-cache entries are trusted only for files last changed this long before the scan that wrote them (ms). */
const STAT_CACHE_MARGIN_MS = 2000;

/**
 * Scan the vault with the config's include/exclude/size rules. With a stat cache, a note whose lstat
 * identity (size, mtime, ctime, inode) equals the cached one, whose cached sha256 equals the previous
 * manifest's, and that last changed well before the cached scan began ({@link STAT_CACHE_MARGIN_MS},
 * against coarse file-system timestamps) is trusted unchanged and not read.
 */
async function scanForIndex(input: BuildInput): Promise<ScanResult> {
  const { config, prev, state } = input;
  const prevSha = new Map<string, string>((prev?.files ?? []).map((f) => [f.path, f.sha256]));
  return scanVault(input.absRoot, {
    include: config.include,
    exclude: config.exclude,
    maxFileBytes: config.max_file_bytes,
    knownNote: (path) => prevSha.has(path),
    reuse: state
      ? (path, id) => {
        const s = state.files[path];
        const sha = prevSha.get(path);
        return s && sha && s.sha256 === sha && s.size === id.size && s.mtime_ms === id.mtime_ms && s.ctime_ms === id.ctime_ms
          && s.ino === id.ino && id.mtime_ms < state.scan_started_ms - STAT_CACHE_MARGIN_MS && id.ctime_ms < state.scan_started_ms - STAT_CACHE_MARGIN_MS
          ? sha
          : undefined;
      }
      : undefined,
  });
}

/** What one run has to do, from the previous manifest and the scan. */
interface ChangePlan {
  /** Notes new or changed since the previous manifest (all notes without one), each with its bytes. */
  toParse: ScannedFile[];
  /** Notes whose path and sha256 are in the previous manifest. */
  reused: number;
  /** Paths of the previous manifest no longer in the vault. */
  removedPaths: string[];
  /** False only when a previous index exists and no note or asset changed (a warm run). */
  changed: boolean;
  /** Notes whose bytes were read (hashed) by this scan, trusted or not. */
  rehashed: number;
}

/**
 * Compare the scan with the previous manifest (docs/INDEX.md "Incremental indexing": same path and sha256
 * ⇒ reused; a rename is a removal plus a parse).
 *
 * @throws CorruptIndexError when a note to parse has no bytes: the stat cache vouched for a file the
 *   manifest does not hold at that sha256.
 */
function planChanges(prev: IndexManifest | null, scan: ScanResult): ChangePlan {
  const prevSha = new Map<string, string>((prev?.files ?? []).map((f) => [f.path, f.sha256]));
  const toParse: ScannedFile[] = [];
  let reused = 0;
  let rehashed = 0;
  for (const f of scan.files) {
    if (prevSha.get(f.path) === f.sha256) reused++;
    else toParse.push(f);
    if (f.bytes !== undefined) rehashed++;
  }
  const currentPaths = new Set(scan.files.map((f) => f.path));
  const removedPaths = (prev?.files ?? []).filter((f) => !currentPaths.has(f.path)).map((f) => f.path);
  const assetsChanged = !prev || prev.assets.length !== scan.assets.length || prev.assets.some((a, i) => a !== scan.assets[i]);
  const changed = !prev || toParse.length > 0 || removedPaths.length > 0 || assetsChanged;
  const missingBytes = toParse.find((f) => !f.bytes);
  if (missingBytes) throw new CorruptIndexError(`stat cache and manifest disagree for ${missingBytes.path}`);
  return { toParse, reused, removedPaths, changed, rehashed };
}

/**
 * The sink a cold build streams its parsed batches into (src/indexer/cold.ts), writing into `indexDir`;
 * when the folder cannot be made, the sink keeps everything in memory and reports `index_not_saved`.
 */
async function openColdSink(indexDir: string | null, fileCount: number): Promise<ColdSink> {
  let dir = indexDir;
  let early: Finding | null = null;
  if (indexDir) {
    try {
      await ensureIndexDir(indexDir);
    } catch (e) {
      early = notSaved(indexDir, e);
      dir = null;
    }
  }
  const sink = new ColdSink(dir, shardCountFor(fileCount), (e) => notSaved(indexDir!, e));
  if (early) sink.failed(early);
  return sink;
}

/** Parse the jobs (emptied), streaming each batch into `sink` when there is one (then no batch is kept). */
function parseChanges(
  jobs: ParseJob[], sink: ColdSink | null, options: IndexOptions, config: VaultConfig,
): Promise<{ batches: ParsedBatch[]; threads: number }> {
  return parseAll(jobs, {
    config,
    workers: options.workers,
    onProgress: options.onProgress ? (done, total) => options.onProgress!({ phase: 'parse', done, total }) : undefined,
    onBatch: sink ? (b) => sink.add(b) : undefined,
  });
}

/** What {@link storeChanges} works on. */
interface StoreInput {
  indexDir: string | null;
  prev: IndexManifest | null;
  /** The cold build's sink (null when a previous index exists). */
  sink: ColdSink | null;
  base: IncrementalBase;
  files: readonly ScannedFile[];
  batches: readonly ParsedBatch[];
  removedPaths: readonly string[];
  changed: boolean;
}

/** The record shards, search source and counts of this run, and the finding of a failed save. */
interface StoredIndex {
  families: Families;
  source: ShardSource;
  counts: { notes: number; chunks: number; links: number };
  saveFinding: Finding | null;
}

/**
 * Persist this run in one of three ways: cold (no previous index: everything was streamed to the sink;
 * doc ids are chunk ordinals; the manifest is committed last), warm (nothing changed: everything stays on
 * disk until read), or incremental ({@link incremental}). A failed write is `saveFinding`, never thrown.
 */
async function storeChanges(s: StoreInput): Promise<StoredIndex> {
  const { indexDir, prev } = s;
  if (!prev) {
    const cold = await s.sink!.finish();
    let saveFinding = cold.saveFinding;
    if (indexDir && cold.searchFiles) {
      try {
        await commitManifest(indexDir, manifestOf(s.base, shardCountFor(s.files.length), cold.families, cold.searchFiles, cold.counts));
      } catch (e) {
        saveFinding = notSaved(indexDir, e);
      }
    }
    return { families: cold.families, counts: cold.counts, source: cold.source, saveFinding };
  }
  if (!s.changed) return { families: diskFamilies(prev), counts: prev.counts, source: persistedSource(indexDir!, prev), saveFinding: null };
  const parsed = new Map<string, ParsedLines>();
  for (const b of s.batches) for (const r of b.records) parsed.set(r.path, r);
  return incremental(indexDir!, prev, s.files, parsed, s.batches, s.removedPaths, s.base);
}

/**
 * Rewrite the stat cache when it would save real work next time: after a cold build, or when many notes
 * had to be re-hashed. A few re-hashed notes (an edit) are cheaper to re-hash next run than to rewrite
 * the cache of every note now. Returns the finding of a failed write, else null.
 */
async function refreshStatCache(
  indexDir: string | null, state: StatState | null, files: readonly ScannedFile[], rehashed: number, scanStarted: number,
): Promise<Finding | null> {
  if (!indexDir || (state && rehashed <= Math.max(32, files.length / 200))) return null;
  const newState: StatState = { scan_started_ms: scanStarted, files: {} };
  for (const f of files) newState.files[f.path] = { ...f.identity, sha256: f.sha256 };
  return writeState(indexDir, newState);
}

/**
 * Record the run's counters for {@link indexStats}. `unresolved`, `ambiguous` and `broken_fragments`
 * become getters that resolve the links on first read (a warm run that is never asked does not).
 */
function attachStats(index: VaultIndex, stats: IndexStats): void {
  let tally: [number, number, number] | null = null;
  const count = (): [number, number, number] => {
    if (!tally) {
      tally = [0, 0, 0];
      for (const l of index.links) {
        if (l.resolution.status === 'unresolved') tally[0]++;
        else if (l.resolution.status === 'ambiguous') tally[1]++;
        else if (l.resolution.status === 'broken_fragment') tally[2]++;
      }
    }
    return tally;
  };
  Object.defineProperty(stats, 'unresolved', { enumerable: true, get: () => count()[0] });
  Object.defineProperty(stats, 'ambiguous', { enumerable: true, get: () => count()[1] });
  Object.defineProperty(stats, 'broken_fragments', { enumerable: true, get: () => count()[2] });
  statsOf.set(index, stats);
}

function notSaved(indexDir: string, e: unknown): Finding {
  return { code: 'index_not_saved', severity: 'warning', message: `cannot save the index to ${indexDir}: ${(e as Error).message}; results are correct but the next run starts cold` };
}

function joinLines(lines: readonly string[]): string {
  return lines.length === 0 ? '' : lines.join('\n') + '\n';
}

function memoryFamilies(t: { notes: string[][]; chunks: string[][]; parse_links: string[][] }): Families {
  const conv = (list: string[][]): ShardRef[] => list.map((lines) => ({ file: null, data: Buffer.from(joinLines(lines), 'utf8'), lines: lines.length }));
  return { notes: conv(t.notes), chunks: conv(t.chunks), parse_links: conv(t.parse_links) };
}

function diskFamilies(m: IndexManifest): Families {
  const conv = (list: ShardFile[]): ShardRef[] => list.map((s) => ({ file: s.file, data: null, lines: s.lines }));
  return { notes: conv(m.store.notes), chunks: conv(m.store.chunks), parse_links: conv(m.store.parse_links) };
}

async function writeSearch(indexDir: string, loaded: LoadedMeta, shards: Map<string, CompactShard>, keep: Record<string, string> | null): Promise<{ meta: string; shards: Record<string, string> }> {
  const out: Record<string, string> = {};
  for (const key of loaded.meta.shards) {
    const shard = shards.get(key);
    out[key] = shard ? await writeData(indexDir, `search-${key}`, encodeShard(shard), 'bin') : keep![key]!;
  }
  return { meta: await writeData(indexDir, 'search-meta', encodeMeta(loaded), 'bin'), shards: out };
}

function manifestOf(
  base: { namespace: string; root: string; optionsHash: string; snapshot: string; manifestFiles: ManifestEntry[]; assets: string[] },
  shardCount: number, fam: Families, search: { meta: string; shards: Record<string, string>; delta?: Record<string, string> }, counts: { notes: number; chunks: number; links: number },
): IndexManifest {
  const files = (list: ShardRef[]): ShardFile[] => list.map((r) => ({ file: r.file!, lines: r.lines }));
  return {
    schema_version: INDEX_SCHEMA_VERSION,
    kind: 'loretrace-index',
    namespace: base.namespace,
    root: base.root,
    options_hash: base.optionsHash,
    snapshot_id: base.snapshot,
    files: base.manifestFiles,
    assets: base.assets,
    shard_count: shardCount,
    store: {
      notes: files(fam.notes), chunks: files(fam.chunks), parse_links: files(fam.parse_links), search_meta: search.meta, search: search.shards,
      ...(search.delta && Object.keys(search.delta).length > 0 ? { search_delta: search.delta } : {}),
    },
    counts,
  };
}

/**
 * Shard source over a persisted index: meta and term shards read (and hash-checked) on first use. A
 * shard with a delta file or tombstones in the meta is served combined (`combineShards`), unless
 * `combine` is false (the raw base shard).
 */
function persistedSource(indexDir: string, m: IndexManifest, combine = true): ShardSource {
  let loaded: LoadedMeta | null = null;
  let mask: Uint8Array | null = null;
  const meta = (): LoadedMeta => {
    if (!loaded) {
      try {
        loaded = decodeMeta(readDataBytesSync(indexDir, m.store.search_meta));
      } catch (e) {
        throw e instanceof CorruptIndexError ? e : new CorruptIndexError(`search meta ${m.store.search_meta} is invalid: ${(e as Error).message}`);
      }
    }
    return loaded;
  };
  const read = (file: string | undefined) => (file ? decodeShard(readDataBytesSync(indexDir, file)) : null);
  return {
    meta,
    load: (key) => {
      const baseFile = m.store.search[key];
      const deltaFile = combine ? m.store.search_delta?.[key] : undefined;
      if (!baseFile && !deltaFile) return null;
      try {
        const baseShard = read(baseFile);
        const delta = read(deltaFile);
        if (!combine) return baseShard;
        const mm = meta().meta;
        if (!delta && !(mm.removed?.length)) return baseShard;
        mask ??= removedMask(mm.removed ?? [], mm.next_id);
        return combineShards(baseShard, mask, delta);
      } catch {
        return null;
      }
    },
  };
}

/** A byte per doc id below `size`, 1 for the ids in `ids`. */
function removedMask(ids: readonly number[], size: number): Uint8Array {
  const mask = new Uint8Array(size);
  for (const id of ids) if (id < size) mask[id] = 1;
  return mask;
}

/** What an incremental update works from: the vault's files now and the notes parsed for this run. */
interface IncrementalBase { namespace: string; root: string; optionsHash: string; snapshot: string; manifestFiles: ManifestEntry[]; assets: string[] }

/**
 * Incremental update of a persisted index: record shards holding a changed, added or removed note are
 * rewritten (other shards keep their files); postings of changed and removed notes are dropped, those of
 * parsed notes added under fresh doc ids; only term shards whose postings changed are rewritten — into
 * delta shards while the change is small, merged back into the base shards past that
 * (docs/INDEX.md "Incremental indexing"). The steps: {@link updateRecordShards},
 * {@link updatePostings}, then {@link deltaSearch} or {@link mergedSearch}, then {@link saveIncremental}.
 */
async function incremental(
  indexDir: string, prev: IndexManifest, files: readonly ScannedFile[], parsed: Map<string, ParsedLines>, batches: readonly ParsedBatch[],
  removedPaths: readonly string[],
  base: IncrementalBase,
) {
  const shardCount = shardCountFor(files.length);
  const dropped = new Set<string>([...removedPaths, ...parsed.keys()]);
  const records = updateRecordShards(indexDir, prev, files, parsed, dropped, shardCount);
  let parsedLinks = 0;
  for (const r of parsed.values()) parsedLinks += r.link_count;
  const postings = updatePostings(indexDir, prev, batches, dropped);
  const counts = { notes: files.length, chunks: postings.docCount, links: prev.counts.links - records.droppedLinks + parsedLinks };
  // Small changes go to delta shards (base term shards keep their files); past 5 % of the docs, or when the
  // shard count changed, everything is merged back into the base shards.
  const pending = postings.next - postings.deltaFrom + postings.tombstones.length;
  const useDelta = shardCount === prev.shard_count && pending <= Math.max(64, 0.05 * postings.docCount);
  const search = useDelta ? deltaSearch(indexDir, prev, postings) : mergedSearch(indexDir, prev, postings, dropped.size > 0);
  const saved = await saveIncremental(indexDir, base, shardCount, records.families, search.persist, counts);
  return { families: saved.families, counts, source: search.source, saveFinding: saved.saveFinding };
}

/** The three record families, in the order every loop over them uses. */
const RECORD_FAMILIES = ['notes', 'chunks', 'parse_links'] as const;
type RecordFamily = (typeof RECORD_FAMILIES)[number];

/** The JSON-lines record of one parsed note for a family. */
const recordLine = (r: ParsedLines, fam: RecordFamily): string => Buffer.from(fam === 'notes' ? r.note : fam === 'chunks' ? r.chunks : r.links).toString('utf8');

/** Links in one `parse_links` record line (one `"source_path":` per link). */
function linksInLine(line: string): number {
  let n = 0;
  for (let i = line.indexOf('"source_path":'); i !== -1; i = line.indexOf('"source_path":', i + 14)) n++;
  return n;
}

/**
 * Step 1: the record shards (notes, chunks, parse_links) with the dropped notes' lines removed and the
 * parsed notes' lines added, each shard's lines in code-unit order of their paths. With the same shard
 * count only the touched shards are rewritten (the others keep their files); when the vault crossed a power
 * of two every line is re-bucketed. Also counts the links of the dropped lines.
 */
function updateRecordShards(
  indexDir: string, prev: IndexManifest, files: readonly ScannedFile[], parsed: Map<string, ParsedLines>, dropped: ReadonlySet<string>, shardCount: number,
): { families: Families; droppedLinks: number } {
  const prevFam = diskFamilies(prev);
  let droppedLinks = 0;
  if (shardCount === prev.shard_count) {
    const touched = new Set<number>();
    for (const p of dropped) touched.add(shardOf(p, shardCount));
    const refOf = (text: string): ShardRef => ({ file: null, data: Buffer.from(text, 'utf8'), lines: splitLinesOf(text).length });
    const families = { ...prevFam };
    for (const fam of RECORD_FAMILIES) {
      const next = [...prevFam[fam]];
      for (const s of touched) {
        const keep: string[] = [];
        for (const l of splitLinesOf(refText(indexDir, prevFam[fam][s]!))) {
          if (!dropped.has(linePath(l))) keep.push(l);
          else if (fam === 'parse_links') droppedLinks += linksInLine(l);
        }
        const add = [...parsed.values()].filter((r) => shardOf(r.path, shardCount) === s).map((r) => recordLine(r, fam));
        const lines = keep.concat(add).map((l) => [linePath(l), l] as const).sort((x, y) => compareCodeUnits(x[0], y[0])).map((x) => x[1]);
        next[s] = refOf(joinLines(lines));
      }
      families[fam] = next;
    }
    return { families, droppedLinks };
  }
  // The shard count changed (the vault crossed a power of two): re-bucket every line.
  const all: Record<RecordFamily, Map<string, string>> = { notes: new Map(), chunks: new Map(), parse_links: new Map() };
  for (const fam of RECORD_FAMILIES) {
    for (const ref of prevFam[fam]) for (const l of splitLinesOf(refText(indexDir, ref))) {
      const p = linePath(l);
      if (!dropped.has(p)) all[fam].set(p, l);
      else if (fam === 'parse_links') droppedLinks += linksInLine(l);
    }
    for (const r of parsed.values()) all[fam].set(r.path, recordLine(r, fam));
  }
  const texts = { notes: [] as string[][], chunks: [] as string[][], parse_links: [] as string[][] };
  for (const fam of RECORD_FAMILIES) {
    for (let s = 0; s < shardCount; s++) texts[fam].push([]);
    for (const f of files) texts[fam][shardOf(f.path, shardCount)]!.push(all[fam].get(f.path)!);
  }
  return { families: memoryFamilies(texts), droppedLinks };
}

/** What {@link updatePostings} hands to the search update: the old index, the new doc ids, lengths and tombstones. */
interface PostingsUpdate {
  old: ShardSource;
  meta: LoadedMeta['meta'];
  /** 1 for every doc id of a dropped note. */
  removed: Uint8Array;
  builder: PostingsBuilder;
  next: number;
  docCount: number;
  sums: number[];
  notes: DocNote[];
  newLengths: Uint32Array;
  /** Tombstones since the last full merge, ascending. */
  tombstones: number[];
  deltaFrom: number;
  prevDelta: Record<string, string>;
  hadPending: boolean;
}

/**
 * Step 2: drop the postings of changed and removed notes (their doc ids become tombstones, their field
 * lengths leave the sums) and add the parsed notes' postings under fresh doc ids after the last one.
 */
function updatePostings(indexDir: string, prev: IndexManifest, batches: readonly ParsedBatch[], dropped: ReadonlySet<string>): PostingsUpdate {
  const old = persistedSource(indexDir, prev);
  const { meta, lengths } = old.meta();
  const removed = new Uint8Array(meta.next_id);
  const sums = [...meta.length_sums];
  let docCount = meta.document_count;
  const keptNotes: DocNote[] = [];
  for (const n of meta.notes) {
    if (!dropped.has(n[0])) {
      keptNotes.push(n);
      continue;
    }
    for (let id = n[1]; id < n[1] + n[2]; id++) {
      removed[id] = 1;
      for (let f = 0; f < FIELD_COUNT; f++) sums[f]! -= lengths[id * FIELD_COUNT + f]!;
      docCount--;
    }
  }
  const builder = new PostingsBuilder();
  let next = meta.next_id;
  const added: DocNote[] = [];
  for (const b of batches) {
    builder.addPacked(b.tokens, next);
    b.records.forEach((r) => {
      added.push([r.path, next, r.chunk_count, r.classes]);
      next += r.chunk_count;
    });
  }
  const newLengths = new Uint32Array(next * FIELD_COUNT);
  newLengths.set(lengths);
  for (let id = 0; id < meta.next_id; id++) if (removed[id]) newLengths.fill(0, id * FIELD_COUNT, id * FIELD_COUNT + FIELD_COUNT);
  for (const [id, l] of builder.lengths) {
    for (let f = 0; f < FIELD_COUNT; f++) {
      newLengths[id * FIELD_COUNT + f] = l[f]!;
      sums[f]! += l[f]!;
    }
    docCount++;
  }
  const tombstones: number[] = [...(meta.removed ?? [])];
  for (let id = 0; id < meta.next_id; id++) if (removed[id]) tombstones.push(id);
  tombstones.sort((x, y) => x - y);
  const prevDelta = prev.store.search_delta ?? {};
  return {
    old, meta, removed, builder, next, docCount, sums,
    notes: keptNotes.concat(added).sort((x, y) => compareCodeUnits(x[0], y[0])),
    newLengths, tombstones,
    deltaFrom: meta.delta_from ?? meta.next_id,
    prevDelta,
    hadPending: Object.keys(prevDelta).length > 0 || (meta.removed?.length ?? 0) > 0,
  };
}

/** A search source for this run and the writer that persists it. */
interface SearchUpdate {
  source: ShardSource;
  persist: () => Promise<{ meta: string; shards: Record<string, string>; delta: Record<string, string> }>;
}

/** Step 3a: a small change — base term shards keep their files; changed terms go to delta shards, dropped docs to tombstones. */
function deltaSearch(indexDir: string, prev: IndexManifest, u: PostingsUpdate): SearchUpdate {
  const deltaShards = new Map<string, CompactShard>();
  for (const key of new Set<string>([...Object.keys(u.prevDelta), ...u.builder.keys()])) {
    let before: CompactShard | null = null;
    if (u.prevDelta[key]) {
      try {
        before = decodeShard(readDataBytesSync(indexDir, u.prevDelta[key]));
      } catch (e) {
        throw e instanceof CorruptIndexError ? e : new CorruptIndexError(`search delta shard ${u.prevDelta[key]} is damaged`);
      }
    }
    deltaShards.set(key, u.builder.merge(before, u.removed, u.builder.termsOf(key)));
  }
  const shardKeys = [...new Set<string>([...Object.keys(prev.store.search), ...[...deltaShards].filter(([, d]) => d.terms.length > 0).map(([k]) => k)])].sort(compareCodeUnits);
  const newLoaded: LoadedMeta = {
    meta: { document_count: u.docCount, next_id: u.next, length_sums: u.sums, notes: u.notes, shards: shardKeys, removed: u.tombstones, delta_from: u.deltaFrom },
    lengths: u.newLengths,
  };
  const mask = removedMask(u.tombstones, u.next);
  const baseOnly = persistedSource(indexDir, { ...prev, store: { ...prev.store, search_delta: {} } }, false);
  return {
    source: {
      meta: () => newLoaded,
      load: (key) => {
        const baseShard = prev.store.search[key] ? baseOnly.load(key) : null;
        if (prev.store.search[key] && !baseShard) return null;
        return combineShards(baseShard, mask, deltaShards.get(key) ?? null);
      },
    },
    persist: async () => {
      const delta: Record<string, string> = {};
      for (const [key, d] of deltaShards) if (d.terms.length > 0) delta[key] = await writeData(indexDir, `search-delta-${key}`, encodeShard(d), 'bin');
      return { meta: await writeData(indexDir, 'search-meta', encodeMeta(newLoaded), 'bin'), shards: prev.store.search, delta };
    },
  };
}

/**
 * Step 3b: a full merge — every base term shard whose postings changed is rewritten (with delta shards or
 * tombstones pending, every base shard is rewritten from its combined view); no delta shards remain.
 *
 * @throws CorruptIndexError when a base shard the manifest lists is missing or damaged.
 */
function mergedSearch(indexDir: string, prev: IndexManifest, u: PostingsUpdate, anyRemoved: boolean): SearchUpdate {
  const newShards = new Map<string, CompactShard>();
  const keys = new Set<string>([...u.meta.shards, ...u.builder.keys()]);
  for (const key of keys) {
    const oldShard = u.meta.shards.includes(key) ? u.old.load(key) : null;
    if (u.meta.shards.includes(key) && !oldShard) throw new CorruptIndexError(`search shard ${prev.store.search[key]} is missing or damaged`);
    const newTerms = u.builder.termsOf(key);
    if (!u.hadPending && newTerms.length === 0 && !(anyRemoved && oldShard && shardHasAny(oldShard, u.removed))) continue;
    newShards.set(key, u.builder.merge(oldShard, u.removed, newTerms));
  }
  const shardKeys = [...keys].filter((k) => (newShards.has(k) ? newShards.get(k)!.terms.length > 0 : u.meta.shards.includes(k))).sort(compareCodeUnits);
  const newLoaded: LoadedMeta = { meta: { document_count: u.docCount, next_id: u.next, length_sums: u.sums, notes: u.notes, shards: shardKeys }, lengths: u.newLengths };
  return {
    source: {
      meta: () => newLoaded,
      load: (key) => (newShards.has(key) ? newShards.get(key)! : u.old.load(key)),
    },
    persist: async () => ({ ...(await writeSearch(indexDir, newLoaded, new Map([...newShards].filter(([, sh]) => sh.terms.length > 0)), prev.store.search)), delta: {} }),
  };
}

/**
 * Step 4: write the rewritten record shards and the search files, then commit the manifest last (a crash
 * before it leaves the previous index valid). A write failure is returned as a finding (`index_not_saved`),
 * not thrown: the in-memory index still answers.
 */
async function saveIncremental(
  indexDir: string, base: IncrementalBase, shardCount: number, families: Families, persist: SearchUpdate['persist'], counts: IndexManifest['counts'],
): Promise<{ families: Families; saveFinding: Finding | null }> {
  try {
    const written: Families = {
      notes: await writeRefs(indexDir, 'notes', families.notes),
      chunks: await writeRefs(indexDir, 'chunks', families.chunks),
      parse_links: await writeRefs(indexDir, 'parse_links', families.parse_links),
    };
    const search = await persist();
    await commitManifest(indexDir, manifestOf(base, shardCount, written, search, counts));
    return { families: written, saveFinding: null };
  } catch (e) {
    return { families, saveFinding: notSaved(indexDir, e) };
  }
}

async function writeRefs(indexDir: string, name: string, refs: ShardRef[]): Promise<ShardRef[]> {
  return Promise.all(refs.map(async (r, s) => (r.data === null ? r : {
    file: await writeData(indexDir, `${name}-${String(s).padStart(3, '0')}`, r.data, 'jsonl'), data: null, lines: r.lines,
  })));
}

interface LazyInput {
  namespace: string;
  root: string;
  snapshot: string;
  manifestFiles: ManifestEntry[];
  config: VaultConfig;
  files: readonly ScannedFile[];
  assets: string[];
  /** Notes over the size cap (scan `too_large`): links to them resolve as `too_large`. */
  tooLarge: readonly { path: VaultPath; size: number }[];
  indexDir: string | null;
  families: Families;
  head: Finding[];
  tail: Finding[];
}

/**
 * The VaultIndex with `notes`, `chunks`, `links` and `findings` as lazy properties (enumerable getters
 * replaced by plain values on first read). Reading them loads the record shards; reading `links` or
 * `findings` resolves every link (a cold build has done that already). Should a record shard be
 * unreadable by then, the notes are parsed again from the vault (same bytes ⇒ same records); a note
 * whose bytes changed meanwhile throws `stale_file`. The search reads one note's chunks, title and
 * aliases without loading a whole family ({@link chunkReaderOf}, {@link namesReaderOf}).
 */
function lazyIndex(p: LazyInput): VaultIndex {
  const records = lazyRecords(p);
  const index = {
    schema_version: INDEX_SCHEMA_VERSION,
    namespace: p.namespace,
    root: p.root,
    snapshot_id: p.snapshot,
    manifest: p.manifestFiles,
    config: p.config,
  } as VaultIndex;
  defineLazy(index, 'notes', () => records.notes().notes);
  defineLazy(index, 'chunks', records.chunks);
  defineLazy(index, 'links', () => records.resolved().links);
  defineLazy(index, 'findings', records.findings);
  recordFileFindings(index, records.fileFindings);
  chunkReaders.set(index, chunkReaderOf(p, records, index));
  namesReaders.set(index, namesReaderOf(p, records, index));
  return index;
}

/** `index[key]` as an enumerable getter that computes `get()` once and replaces itself by the value. */
function defineLazy<K extends 'notes' | 'chunks' | 'links' | 'findings'>(index: VaultIndex, key: K, get: () => VaultIndex[K]): void {
  Object.defineProperty(index, key, {
    enumerable: true,
    configurable: true,
    get() {
      const value = get();
      Object.defineProperty(index, key, { value, enumerable: true, configurable: true, writable: true });
      return value;
    },
    set(value: VaultIndex[K]) {
      Object.defineProperty(index, key, { value, enumerable: true, configurable: true, writable: true });
    },
  });
}

/** The whole record families of a lazy index, each loaded (and cached) on first call. */
interface LazyRecords {
  /** Note records and the findings of their parse, in manifest order. */
  notes: () => { notes: NoteRecord[]; findings: Finding[] };
  /** Every chunk, in manifest order. */
  chunks: () => Chunk[];
  /** Every link resolved vault-wide (sorted by source path, line, column); its findings are `findings()`'s. */
  resolved: () => { links: LinkRecord[] };
  /** The run's findings: the scan's first, then notes' and links' (in a fixed order), then the save's. */
  findings: () => Finding[];
  /** `findings()` without link resolution's (which it does not run): the scan's, the notes', the save's. */
  fileFindings: () => Finding[];
  /** True once `notes()` has run. */
  notesLoaded: () => boolean;
  /** The chunks once `chunks()` has run, else null. */
  loadedChunks: () => Chunk[] | null;
}

/** The loaders behind a lazy index's properties (see {@link lazyIndex}). */
function lazyRecords(p: LazyInput): LazyRecords {
  const familyLines = familyLinesOf(p);
  let notesCache: { notes: NoteRecord[]; findings: Finding[] } | null = null;
  const notes = () => {
    if (!notesCache) {
      const list: NoteRecord[] = [];
      const findings: Finding[] = [];
      for (const l of familyLines('notes')) {
        const v = JSON.parse(l) as NoteLineValue;
        list.push(v.note);
        for (const f of v.findings) findings.push(f);
      }
      notesCache = { notes: list, findings };
    }
    return notesCache;
  };
  let chunksCache: Chunk[] | null = null;
  const chunks = () => {
    if (!chunksCache) {
      chunksCache = [];
      for (const l of familyLines('chunks')) for (const c of (JSON.parse(l) as { chunks: Chunk[] }).chunks) chunksCache.push(c);
    }
    return chunksCache;
  };
  let resolvedCache: { links: LinkRecord[] } | null = null;
  const resolved = () => {
    if (!resolvedCache) {
      const pending: LinkRecord[] = [];
      for (const l of familyLines('parse_links')) for (const x of (JSON.parse(l) as { links: LinkRecord[] }).links) pending.push(x);
      resolvedCache = { links: sortLinks(resolveLinkRecords(notes().notes, pending, { files: p.assets, tooLarge: p.tooLarge })) };
    }
    return resolvedCache;
  };
  // Link findings are built only here: a reader of the links alone (traversal, the proxy) never holds
  // one message per ambiguous link (1.4 million at 1,000 copies of a vault).
  const findings = () => {
    const out = [...p.head];
    for (const f of sortFindings(notes().findings.concat(linkFindings(resolved().links)))) out.push(f);
    for (const f of p.tail) out.push(f);
    return out;
  };
  let fileCache: Finding[] | null = null;
  const fileFindings = () => (fileCache ??= [...p.head, ...sortFindings([...notes().findings]), ...p.tail]);
  return { notes, chunks, resolved, findings, fileFindings, notesLoaded: () => notesCache !== null, loadedChunks: () => chunksCache };
}

/**
 * A family's record lines in manifest order, read from its shards; when a shard is unreadable or lacks a
 * note, every note is parsed again from the vault (once, then kept) and its lines taken from that.
 *
 * @throws LoretraceError `stale_file` when a note's bytes no longer match the sha256 it was indexed with.
 */
function familyLinesOf(p: LazyInput): (fam: keyof Families) => string[] {
  const paths = p.files.map((f) => f.path);
  let fallback: Map<string, ParsedLines> | null = null;
  const reparse = (): Map<string, ParsedLines> => {
    if (!fallback) {
      fallback = new Map();
      for (const f of p.files) {
        const bytes = readFileSync(f.abs_path);
        const sha = sha256Hex(bytes);
        if (sha !== f.sha256) {
          throw new LoretraceError('stale_file', `${f.path} changed since it was indexed (sha256 ${sha.slice(0, 12)}…, index has ${f.sha256.slice(0, 12)}…)`, { file: f.path, expected: `sha256 ${f.sha256}` });
        }
        for (const r of parseBatch([{ path: f.path, sha256: f.sha256, bytes }], p.config).records) fallback.set(r.path, r);
      }
    }
    return fallback;
  };
  return (fam) => {
    try {
      const byPath = new Map<string, string>();
      for (const ref of p.families[fam]) for (const l of splitLinesOf(refText(p.indexDir, ref))) byPath.set(linePath(l), l);
      return paths.map((path) => {
        const l = byPath.get(path);
        if (l === undefined) throw new CorruptIndexError(`record of ${path} is missing from the stored ${fam}`);
        return l;
      });
    } catch (e) {
      if (!(e instanceof CorruptIndexError)) throw e;
      const all = reparse();
      return paths.map((path) => recordLine(all.get(path)!, fam));
    }
  };
}

/**
 * The chunks of one note, for search hits and phrase checks: one record line at a time
 * (src/indexer/record-lines.ts), each note's list kept; from the loaded chunks once they are, or when a
 * shard is unreadable.
 */
function chunkReaderOf(p: LazyInput, records: LazyRecords, index: VaultIndex): (path: VaultPath) => readonly Chunk[] {
  const chunkLine = recordLineReader(p.indexDir, p.families.chunks);
  const parsedChunks = new Map<string, Chunk[]>();
  return (path) => {
    const loaded = records.loadedChunks();
    if (loaded || p.families.chunks.length === 0) return loaded ? chunksByPath(loaded, path) : [];
    let list = parsedChunks.get(path);
    if (!list) {
      try {
        const line = chunkLine(path);
        list = line === null ? [] : (JSON.parse(line) as { chunks: Chunk[] }).chunks;
      } catch (e) {
        if (!(e instanceof CorruptIndexError)) throw e;
        return chunksByPath(index.chunks, path);
      }
      parsedChunks.set(path, list);
    }
    return list;
  };
}

/**
 * Title then aliases of one note, for the search's name match: one record line at a time, each note's
 * list kept; once every note is loaded anyway (or a shard is unreadable), from one path → note map.
 */
function namesReaderOf(p: LazyInput, records: LazyRecords, index: VaultIndex): (path: VaultPath) => readonly string[] {
  const noteLine = recordLineReader(p.indexDir, p.families.notes);
  const names = new Map<string, string[]>();
  let loadedNotes: Map<string, NoteRecord> | null = null;
  const fromLoaded = (path: string) => (loadedNotes ??= new Map(index.notes.map((n) => [n.path, n]))).get(path);
  return (path) => {
    let list = names.get(path);
    if (!list) {
      let note: NoteRecord | undefined;
      if (records.notesLoaded() || p.families.notes.length === 0) note = fromLoaded(path);
      else {
        try {
          const line = noteLine(path);
          note = line === null ? undefined : (JSON.parse(line) as NoteLineValue).note;
        } catch (e) {
          if (!(e instanceof CorruptIndexError)) throw e;
          note = fromLoaded(path);
        }
      }
      list = note ? [note.title, ...note.aliases] : [];
      names.set(path, list);
    }
    return list;
  };
}

/**
 * Path → SHA-256 (hex) of the bytes a note's records were parsed from: the manifest's `sha256` (the scan's
 * hash, or the stat cache's for an unchanged file, whose records were kept for exactly that hash). Mapped
 * on first use; the search shares phrase checks among notes with the same bytes by it.
 */
function bytesHashReaderOf(files: readonly ManifestEntry[]): (path: VaultPath) => string | undefined {
  let byPath: Map<string, string> | null = null;
  return (path) => (byPath ??= new Map(files.map((f) => [f.path, f.sha256]))).get(path);
}

const byPathCache = new WeakMap<Chunk[], Map<string, Chunk[]>>();
function chunksByPath(chunks: Chunk[], path: string): Chunk[] {
  let m = byPathCache.get(chunks);
  if (!m) {
    m = new Map();
    for (const c of chunks) {
      const list = m.get(c.path);
      if (list) list.push(c);
      else m.set(c.path, [c]);
    }
    byPathCache.set(chunks, m);
  }
  return m.get(path) ?? [];
}

/** Findings of notes in a fixed order (path, line, column, code, message) so warm and cold runs agree. */
function sortFindings(list: Finding[]): Finding[] {
  return list.sort((a, b) => compareCodeUnits(a.path ?? '', b.path ?? '') || (a.line ?? 0) - (b.line ?? 0)
    || (a.column ?? 0) - (b.column ?? 0) || compareCodeUnits(a.code, b.code) || compareCodeUnits(a.message, b.message));
}

function sortLinks(links: LinkRecord[]): LinkRecord[] {
  return [...links].sort((a, b) => compareCodeUnits(a.source_path, b.source_path) || a.line - b.line || a.column - b.column);
}

/**
 * Vault-relative on-disk names of the notes whose name on disk differs from their NFC path (the scan
 * lists each folder and keeps the name it found in `abs_path`): what `notePathOnDisk` answers.
 */
function diskNamesOf(root: string, files: readonly ScannedFile[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const f of files) {
    const onDisk = f.abs_path.slice(root.length + 1).split(sep).join('/');
    if (onDisk !== f.path) names.set(f.path, onDisk);
  }
  return names;
}

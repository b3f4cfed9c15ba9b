/**
 * `indexVault(root, options)`: scan → parse (only what changed) → resolve links vault-wide → search
 * shards → persist → the in-memory {@link VaultIndex}.
 *
 * Incremental rules (docs/INDEX.md "Incremental indexing"):
 * - A note whose path and sha256 are in the previous manifest is not re-parsed (`stats.reused`); any other
 *   note is parsed (`stats.parsed`); notes of the previous manifest that are gone count as `stats.removed`.
 *   A rename is a removal plus a parse.
 * - When anything changed (a parse, a removal, or the asset list), every link is re-resolved against the
 *   whole vault (resolution depends on every name) and the search shards are rebuilt from the stored
 *   token data (no re-tokenising). Otherwise the stored resolved links are used as they are.
 * - A corrupt index, another schema_version, or other options (config, namespace, tokenizer) ⇒ full
 *   rebuild with a warning finding `index_rebuilt` — never a crash, never stale results.
 */
import { basename, resolve as resolvePath } from 'node:path';
import type { Finding } from '../errors.js';
import type { Chunk, LinkRecord, ManifestEntry, NoteRecord, VaultConfig, VaultIndex, VaultPath } from '../types.js';
import { resolveLinks } from '../links/resolve.js';
import { attachSearchSource } from '../search/search.js';
import { buildShards, type SearchMeta, type SearchShard, type ShardSource } from '../search/engine.js';
import { TOKENIZER_VERSION, type NoteTokens } from '../search/tokenize.js';
import { loadVaultConfig } from '../vault/config.js';
import { compareCodeUnits, scanVault, vaultRoot, type ScannedFile } from '../vault/scan.js';
import { parseAll, type ParsedRecord } from './parse-pool.js';
import {
  CorruptIndexError, INDEX_SCHEMA_VERSION, canonicalHash, commitManifest, defaultIndexDir, ensureIndexDir, readData,
  readDataSync, readManifest, readShards, readState, shardCountFor, shardOf, snapshotId, writeData, writeState,
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
  /** Links whose resolution is `unresolved` / `ambiguous` / `broken_fragment`. */
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

interface NoteLine { path: string; sha256: string; note: NoteRecord; chunks: Chunk[]; findings: Finding[] }
interface LinksLine { path: string; links: LinkRecord[] }
interface TokensLine { path: string; tokens: NoteTokens }
interface ResolvedLine { path: string; links: LinkRecord[]; findings: Finding[] }

/**
 * Index the vault at `root` (incrementally, when a persisted index exists) and return the in-memory index.
 *
 * @throws LoretraceError `vault_not_found` / `vault_not_a_directory` (exit 2), `config_not_found` /
 *   `bad_config` (exit 2). Problems with single files or the persisted index are findings, never throws.
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
  const optionsHash = canonicalHash({ schema_version: INDEX_SCHEMA_VERSION, tokenizer: TOKENIZER_VERSION, namespace, config });
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

async function build(input: BuildInput): Promise<VaultIndex> {
  const { config, namespace, indexDir, prev, state, options } = input;
  const findings = [...input.findings];
  const prevSha = new Map<string, string>((prev?.files ?? []).map((f) => [f.path, f.sha256]));
  const scanStarted = Date.now();
  const scan = await scanVault(input.absRoot, {
    include: config.include,
    exclude: config.exclude,
    maxFileBytes: config.max_file_bytes,
    reuse: state
      ? (path, id) => {
        const s = state.files[path];
        const sha = prevSha.get(path);
        return s && sha && s.sha256 === sha && s.size === id.size && s.mtime_ms === id.mtime_ms && s.ctime_ms === id.ctime_ms
          && s.ino === id.ino && id.mtime_ms < state.scan_started_ms - 2000 && id.ctime_ms < state.scan_started_ms - 2000
          ? sha
          : undefined;
      }
      : undefined,
  });
  for (const f of scan.findings) findings.push(f);

  const files = scan.files;
  const toParse: ScannedFile[] = [];
  const reusedPaths: string[] = [];
  for (const f of files) {
    if (prevSha.get(f.path) === f.sha256) reusedPaths.push(f.path);
    else toParse.push(f);
  }
  const currentPaths = new Set(files.map((f) => f.path));
  const removed = (prev?.files ?? []).filter((f) => !currentPaths.has(f.path)).length;
  const assetsChanged = !prev || JSON.stringify(prev.assets) !== JSON.stringify(scan.assets);
  const changed = !prev || toParse.length > 0 || removed > 0 || assetsChanged;

  // Parse what changed (bytes may be missing when the stat cache vouched for an unchanged file).
  const missingBytes = toParse.filter((f) => !f.bytes);
  if (missingBytes.length > 0) throw new CorruptIndexError(`stat cache and manifest disagree for ${missingBytes[0]!.path}`);
  const { records: parsedRecords, threads } = await parseAll(
    toParse.map((f) => ({ path: f.path, sha256: f.sha256, bytes: f.bytes! })),
    { config, workers: options.workers, onProgress: options.onProgress ? (done, total) => options.onProgress!({ phase: 'parse', done, total }) : undefined },
  );
  const parsedByPath = new Map(parsedRecords.map((r) => [r.path, r]));

  // Load reused records from the store.
  const reusedSet = new Set(reusedPaths);
  const noteLines = new Map<string, NoteLine>();
  const linkLines = new Map<string, LinksLine>();
  const tokenLines = new Map<string, TokensLine>();
  let resolvedLines: ResolvedLine[] | null = null;
  if (prev && indexDir && reusedPaths.length > 0) {
    const wanted = (p: { path: string }) => reusedSet.has(p.path);
    for (const line of (await readShards<NoteLine>(indexDir, prev.store.notes)).flat()) if (wanted(line)) noteLines.set(line.path, line);
    if (changed) {
      for (const line of (await readShards<LinksLine>(indexDir, prev.store.parse_links)).flat()) if (wanted(line)) linkLines.set(line.path, line);
      for (const line of (await readShards<TokensLine>(indexDir, prev.store.tokens)).flat()) if (wanted(line)) tokenLines.set(line.path, line);
    } else {
      resolvedLines = (await readShards<ResolvedLine>(indexDir, prev.store.links)).flat();
    }
    for (const p of reusedPaths) {
      const line = noteLines.get(p);
      if (!line || line.sha256 !== prevSha.get(p)) throw new CorruptIndexError(`record of ${p} is missing from the stored notes`);
      if (changed && (!linkLines.has(p) || !tokenLines.has(p))) throw new CorruptIndexError(`stored links or tokens of ${p} are missing`);
    }
  }

  // Assemble notes and chunks in path order.
  const notes: NoteRecord[] = [];
  const chunks: Chunk[] = [];
  const parseFindings: Finding[] = [];
  const pendingLinks: LinkRecord[] = [];
  for (const f of files) {
    const rec = parsedByPath.get(f.path);
    const line = rec ?? noteLines.get(f.path)!;
    notes.push(line.note);
    chunks.push(...line.chunks);
    parseFindings.push(...line.findings);
    if (changed) pendingLinks.push(...(rec ? rec.links : linkLines.get(f.path)!.links));
  }

  // Links: re-resolve vault-wide when anything changed, else reuse.
  let links: LinkRecord[];
  let resolveFindings: Finding[];
  if (changed || !resolvedLines) {
    const resolved = resolveLinks(notes, chunks, pendingLinks, { files: scan.assets });
    links = sortLinks(resolved.links);
    resolveFindings = resolved.findings;
  } else {
    const byPath = new Map(resolvedLines.map((l) => [l.path, l]));
    links = [];
    resolveFindings = [];
    for (const f of files) {
      const l = byPath.get(f.path);
      if (l) links.push(...l.links);
    }
    for (const l of resolvedLines) resolveFindings.push(...l.findings);
  }
  for (const f of sortFindings(parseFindings.concat(resolveFindings))) findings.push(f);

  const manifestFiles: ManifestEntry[] = files.map((f) => ({ path: f.path, size: f.size, sha256: f.sha256 }));
  const snapshot = snapshotId(namespace, manifestFiles, scan.assets);

  // Search shards and persistence.
  let source: ShardSource | null = null;
  let saveFinding: Finding | null = null;
  if (changed) {
    const tokensOf = (note: NoteRecord): NoteTokens => (parsedByPath.get(note.path)?.tokens ?? tokenLines.get(note.path)!.tokens);
    const built = buildShards(notes, chunks, tokensOf);
    source = { meta: built.meta, load: (key) => built.shards.get(key) ?? null };
    if (indexDir) {
      try {
        await persistAll(indexDir, {
          namespace, root: scan.root, optionsHash: input.optionsHash,
          snapshot, manifestFiles, assets: scan.assets, files, parsedByPath, noteLines, linkLines, tokenLines, links, resolveFindings,
          meta: built.meta, shards: built.shards, counts: { notes: notes.length, chunks: chunks.length, links: links.length },
        });
      } catch (e) {
        saveFinding = { code: 'index_not_saved', severity: 'warning', message: `cannot save the index to ${indexDir}: ${(e as Error).message}; results are correct but the next run starts cold` };
      }
    }
  } else if (indexDir && prev) {
    source = await persistedSource(indexDir, prev);
  }
  if (saveFinding) findings.push(saveFinding);
  if (indexDir && !saveFinding) {
    const newState: StatState = { scan_started_ms: scanStarted, files: {} };
    for (const f of files) newState.files[f.path] = { ...f.identity, sha256: f.sha256 };
    const f = await writeState(indexDir, newState);
    if (f) findings.push(f);
  }

  const index: VaultIndex = {
    schema_version: INDEX_SCHEMA_VERSION,
    namespace,
    root: scan.root,
    snapshot_id: snapshot,
    manifest: manifestFiles,
    notes,
    chunks,
    links,
    findings,
    config,
  };
  if (source) attachSearchSource(index, source);
  let unresolved = 0;
  let ambiguous = 0;
  let broken = 0;
  for (const l of links) {
    if (l.resolution.status === 'unresolved') unresolved++;
    else if (l.resolution.status === 'ambiguous') ambiguous++;
    else if (l.resolution.status === 'broken_fragment') broken++;
  }
  statsOf.set(index, {
    notes: notes.length, chunks: chunks.length, links: links.length, unresolved, ambiguous, broken_fragments: broken,
    parsed: parsedRecords.length, reused: reusedPaths.length, removed, rebuilt: input.rebuilt, index_dir: indexDir, threads,
  });
  assetsOf.set(index, scan.assets);
  return index;
}

/** Findings of notes in a fixed order (path, line, column, code, message) so warm and cold runs agree. */
function sortFindings(list: Finding[]): Finding[] {
  return list.sort((a, b) => compareCodeUnits(a.path ?? '', b.path ?? '') || (a.line ?? 0) - (b.line ?? 0)
    || (a.column ?? 0) - (b.column ?? 0) || compareCodeUnits(a.code, b.code) || compareCodeUnits(a.message, b.message));
}

function sortLinks(links: LinkRecord[]): LinkRecord[] {
  return [...links].sort((a, b) => compareCodeUnits(a.source_path, b.source_path) || a.line - b.line || a.column - b.column);
}

async function persistedSource(indexDir: string, manifest: IndexManifest): Promise<ShardSource> {
  let meta: SearchMeta;
  try {
    meta = JSON.parse(await readData(indexDir, manifest.store.search_meta)) as SearchMeta;
  } catch (e) {
    throw e instanceof CorruptIndexError ? e : new CorruptIndexError(`search meta ${manifest.store.search_meta} is invalid`);
  }
  return {
    meta,
    load: (key) => {
      const file = manifest.store.search[key];
      if (!file) return null;
      const text = readDataSync(indexDir, file);
      if (text === null) return null;
      try {
        return JSON.parse(text) as SearchShard;
      } catch {
        return null;
      }
    },
  };
}

interface PersistInput {
  namespace: string;
  root: string;
  optionsHash: string;
  snapshot: string;
  manifestFiles: ManifestEntry[];
  assets: string[];
  files: ScannedFile[];
  parsedByPath: Map<string, ParsedRecord>;
  noteLines: Map<string, NoteLine>;
  linkLines: Map<string, LinksLine>;
  tokenLines: Map<string, TokensLine>;
  links: LinkRecord[];
  resolveFindings: Finding[];
  meta: SearchMeta;
  shards: Map<string, SearchShard>;
  counts: { notes: number; chunks: number; links: number };
}

async function persistAll(indexDir: string, p: PersistInput): Promise<void> {
  await ensureIndexDir(indexDir);
  const shardCount = shardCountFor(p.files.length);
  const buckets: VaultPath[][] = Array.from({ length: shardCount }, () => []);
  for (const f of p.files) buckets[shardOf(f.path, shardCount)]!.push(f.path);
  const linksBySource = new Map<string, LinkRecord[]>();
  for (const l of p.links) {
    const arr = linksBySource.get(l.source_path);
    if (arr) arr.push(l);
    else linksBySource.set(l.source_path, [l]);
  }
  const findingsBySource = new Map<string, Finding[]>();
  for (const f of p.resolveFindings) {
    const key = f.path ?? '';
    const arr = findingsBySource.get(key);
    if (arr) arr.push(f);
    else findingsBySource.set(key, [f]);
  }
  const orphanFindings = [...findingsBySource.keys()].filter((k) => !p.parsedByPath.has(k) && !p.noteLines.has(k));
  const family = async (name: string, line: (path: string) => unknown | undefined, extra: (s: number) => unknown[] = () => []): Promise<ShardFile[]> => {
    return Promise.all(buckets.map(async (paths, s) => {
      const lines: string[] = [];
      for (const path of paths) {
        const v = line(path);
        if (v !== undefined) lines.push(JSON.stringify(v));
      }
      for (const v of extra(s)) lines.push(JSON.stringify(v));
      const file = await writeData(indexDir, `${name}-${String(s).padStart(3, '0')}`, lines.map((l) => l + '\n').join(''), 'jsonl');
      return { file, lines: lines.length };
    }));
  };
  const notes = await family('notes', (path) => {
    const r = p.parsedByPath.get(path);
    return r ? { path, sha256: r.sha256, note: r.note, chunks: r.chunks, findings: r.findings } : p.noteLines.get(path);
  });
  const parseLinks = await family('parse_links', (path) => {
    const r = p.parsedByPath.get(path);
    return r ? { path, links: r.links } : p.linkLines.get(path);
  });
  const tokens = await family('tokens', (path) => {
    const r = p.parsedByPath.get(path);
    return r ? { path, tokens: r.tokens } : p.tokenLines.get(path);
  });
  const links = await family(
    'links',
    (path) => ({ path, links: linksBySource.get(path) ?? [], findings: findingsBySource.get(path) ?? [] }),
    (s) => (s === 0 ? orphanFindings.map((k) => ({ path: k, links: [], findings: findingsBySource.get(k)! })) : []),
  );
  const searchMeta = await writeData(indexDir, 'search-meta', JSON.stringify(p.meta), 'json');
  const search: Record<string, string> = {};
  for (const [key, shard] of p.shards) search[key] = await writeData(indexDir, `search-${key}`, JSON.stringify(shard), 'json');
  const manifest: IndexManifest = {
    schema_version: INDEX_SCHEMA_VERSION,
    kind: 'loretrace-index',
    namespace: p.namespace,
    root: p.root,
    options_hash: p.optionsHash,
    snapshot_id: p.snapshot,
    files: p.manifestFiles,
    assets: p.assets,
    shard_count: shardCount,
    store: { notes, parse_links: parseLinks, tokens, links, search_meta: searchMeta, search },
    counts: p.counts,
  };
  await commitManifest(indexDir, manifest);
}

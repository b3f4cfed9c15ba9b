/**
 * The persisted index: where it lives, what it holds, how it is read and written.
 *
 * Layout of an index directory (docs/INDEX.md "Persisted index"):
 * ```
 * <indexDir>/index.json      manifest (schemas/index-manifest.schema.json): snapshot + data file names
 * <indexDir>/state.json      stat cache (size, mtime, ctime, inode per note) — speeds up re-scans only
 * <indexDir>/data/*.jsonl    content-addressed record shards, one JSON line per note: notes, chunks, parse_links
 * <indexDir>/data/*.bin      content-addressed binary search files: search-meta, search-<shard key>
 *                            (layout in src/search/postings.ts)
 * ```
 * No file is one giant JSON string: records are sharded JSON lines and the search index is split by
 * term shard, so a 300× vault stays far from V8's 512 MiB string limit.
 *
 * Writes are atomic: every data file is written to a temp name and renamed; its name carries the hash of
 * its content, so a data file never changes once written; `index.json` is renamed into place last.
 * Readers of an older manifest therefore see a consistent set, and concurrent writers cannot mix.
 * Unreferenced data files older than a minute are removed after a write.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import canonicalize from 'canonicalize';
import type { Finding } from '../errors.js';
import type { ManifestEntry } from '../types.js';
import { sha256Hex } from '../vault/hash.js';
import type { FileIdentity } from '../vault/scan.js';
import { makeOutputFolder } from '../safe-write.js';

/** Layout version of the persisted index. Any other version found on disk is rebuilt (`index_rebuilt`). */
export const INDEX_SCHEMA_VERSION = '3';

/** One data file of a shard family and its number of JSON lines. */
export interface ShardFile {
  file: string;
  lines: number;
}

/** The manifest, `index.json` (schemas/index-manifest.schema.json). */
export interface IndexManifest {
  schema_version: string;
  kind: 'loretrace-index';
  namespace: string;
  root: string;
  options_hash: string;
  snapshot_id: string;
  files: ManifestEntry[];
  assets: string[];
  shard_count: number;
  store: {
    /** `{ path, sha256, note, findings }` per note. */
    notes: ShardFile[];
    /** `{ path, chunks }` per note. */
    chunks: ShardFile[];
    /** `{ path, links }` per note: links before resolution. */
    parse_links: ShardFile[];
    search_meta: string;
    search: Record<string, string>;
    /** Delta term shards (docs added since the last full merge), by shard key; absent = none. */
    search_delta?: Record<string, string>;
  };
  counts: { notes: number; chunks: number; links: number };
}

/** The stat cache (`state.json`). */
export interface StatState {
  /** Time the scan that produced this state started (ms since epoch). Files modified later are re-hashed. */
  scan_started_ms: number;
  files: Record<string, FileIdentity & { sha256: string }>;
}

/**
 * `snapshot_id`: lower-case hex sha256 of the RFC 8785 canonical JSON (package `canonicalize`) of
 * `{ namespace, files, assets }` — files sorted by path, each `{ path, size, sha256 }` (the lock-file idea
 * of seed 002). Identical vault content and namespace ⇒ identical id, on any machine.
 */
export function snapshotId(namespace: string, files: readonly ManifestEntry[], assets: readonly string[]): string {
  // The canonical JSON of this fixed shape, written out directly (canonicalize() of the same object gives
  // the same bytes — tests/indexer.test.ts checks it — at a tenth of the cost on 15,000 files): keys in
  // code-unit order (assets < files < namespace; path < sha256 < size), strings as JSON.stringify writes
  // them (RFC 8785 §3.2.2.2), sizes are integers. Files in the order given (the manifest's path order).
  const sorted = files;
  let body = `{"assets":${JSON.stringify(assets)},"files":[`;
  for (let i = 0; i < sorted.length; i++) {
    const f = sorted[i]!;
    if (!Number.isSafeInteger(f.size) || !/^[0-9a-f]{64}$/.test(f.sha256)) return sha256Hex(canonicalize({ namespace, files: sorted.map((x) => ({ path: x.path, size: x.size, sha256: x.sha256 })), assets }) ?? '');
    body += `${i === 0 ? '' : ','}{"path":${JSON.stringify(f.path)},"sha256":"${f.sha256}","size":${f.size}}`;
  }
  body += `],"namespace":${JSON.stringify(namespace)}}`;
  return sha256Hex(body);
}


/** sha256 of the canonical JSON of a value (used for `options_hash`). */
export function canonicalHash(value: unknown): string {
  return sha256Hex(canonicalize(value) ?? '');
}

/**
 * Where the index of a vault lives when no directory is given: `indexDir` option, else
 * `LORETRACE_INDEX_DIR`, else `$XDG_CACHE_HOME/loretrace/<id>`, else `~/.cache/loretrace/<id>`
 * (`%LOCALAPPDATA%\loretrace\<id>` on Windows), where `<id>` is the first 16 hex digits of
 * sha256(real root path + NUL + namespace). Always outside the vault (the vault may be read-only).
 */
export function defaultIndexDir(realRoot: string, namespace: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.LORETRACE_INDEX_DIR) return env.LORETRACE_INDEX_DIR;
  const id = sha256Hex(`${realRoot}\u0000${namespace}`).slice(0, 16);
  const base = env.XDG_CACHE_HOME
    || (process.platform === 'win32' && env.LOCALAPPDATA ? env.LOCALAPPDATA : join(env.HOME || homedir(), '.cache'));
  return join(base, 'loretrace', id);
}

/** Number of record shards for `n` notes: a power of two, about 256 notes a shard, 1…256. */
export function shardCountFor(n: number): number {
  let s = 1;
  while (s < 256 && s * 256 < n) s *= 2;
  return s;
}

/** Record shard of a path: first 8 hex digits of sha256(path), modulo `shardCount`. */
export function shardOf(path: string, shardCount: number): number {
  return parseInt(createHash('sha256').update(path).digest('hex').slice(0, 8), 16) % shardCount;
}

let manifestValidator: ValidateFunction | undefined;

function validateManifest(value: unknown): string | null {
  if (!manifestValidator) {
    const schemaPath = fileURLToPath(new URL('../../schemas/index-manifest.schema.json', import.meta.url));
    const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as object;
    manifestValidator = new Ajv2020({ allErrors: false, strict: false }).compile(schema);
  }
  const validate = manifestValidator;
  if (validate(value)) return null;
  const e = validate.errors?.[0];
  return `${e?.instancePath || '/'} ${e?.message ?? 'invalid'}`;
}

/** Thrown inside the store when persisted data cannot be trusted; turned into an `index_rebuilt` finding. */
export class CorruptIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorruptIndexError';
  }
}

/**
 * Read and validate `index.json`. Returns null when there is no index yet; throws
 * {@link CorruptIndexError} (message says why) when it is unreadable, invalid or from another version.
 */
export async function readManifest(indexDir: string): Promise<IndexManifest | null> {
  let text: string;
  try {
    text = readFileSync(join(indexDir, 'index.json'), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CorruptIndexError(`cannot read ${join(indexDir, 'index.json')}: ${(e as Error).message}`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    throw new CorruptIndexError(`${join(indexDir, 'index.json')} is not valid JSON (${(e as Error).message})`);
  }
  const version = (value as { schema_version?: unknown } | null)?.schema_version;
  if (version !== INDEX_SCHEMA_VERSION) {
    throw new CorruptIndexError(`${join(indexDir, 'index.json')} has schema_version ${JSON.stringify(version)}, expected "${INDEX_SCHEMA_VERSION}"`);
  }
  const problem = validateManifest(value);
  if (problem) throw new CorruptIndexError(`${join(indexDir, 'index.json')} does not match schemas/index-manifest.schema.json at ${problem}`);
  return value as IndexManifest;
}

/**
 * Synchronous read of one data file's bytes, hash-checked (lazy loads happen inside synchronous calls
 * such as `search` or a first read of `index.chunks`). Throws {@link CorruptIndexError}.
 */
export function readDataBytesSync(indexDir: string, file: string): Buffer {
  let buf: Buffer;
  try {
    buf = readFileSync(join(indexDir, 'data', file));
  } catch (e) {
    throw new CorruptIndexError(`cannot read data file ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  checkName(file, buf);
  return buf;
}

function checkName(file: string, buf: Buffer): void {
  const want = /-([0-9a-f]{16})\.(?:jsonl?|bin)$/.exec(file)?.[1];
  const got = createHash('sha256').update(buf).digest('hex').slice(0, 16);
  if (want !== got) throw new CorruptIndexError(`data file ${file} is damaged (content hash ${got})`);
}

/**
 * Write one data file (content-addressed; skipped when a file with that name exists) and return its name.
 * `family` is `[a-z0-9_-]+`.
 */
export async function writeData(indexDir: string, family: string, content: string | Buffer, ext: 'json' | 'jsonl' | 'bin'): Promise<string> {
  const buf = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
  const name = `${family}-${createHash('sha256').update(buf).digest('hex').slice(0, 16)}.${ext}`;
  const target = join(indexDir, 'data', name);
  try {
    const st = await stat(target);
    if (st.size === buf.byteLength) return name;
  } catch {
    // not there yet
  }
  await atomicWrite(target, buf);
  return name;
}

/** Write a file atomically: temp file in the same folder, then rename. */
export async function atomicWrite(target: string, data: string | Buffer): Promise<void> {
  const tmp = `${target}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;
  await writeFile(tmp, data);
  try {
    await rename(tmp, target);
  } catch (e) {
    await rm(tmp, { force: true });
    throw e;
  }
}

/**
 * Make sure `<indexDir>/data` exists, one folder level at a time (src/safe-write.ts `makeOutputFolder`: Node's
 * recursive mkdir never returns under /proc).
 * @throws LoretraceError `output_unwritable` (exit 2) naming the folder that cannot be made and why.
 */
export async function ensureIndexDir(indexDir: string): Promise<void> {
  makeOutputFolder(join(indexDir, 'data'), `index directory ${indexDir}`);
}

/** Unreferenced temp files (`*.tmp-*`) are removed only when older than this (ms). */
const TEMP_GRACE_MS = 3_600_000;

/**
 * Write the manifest last (atomic rename), then remove unreferenced data files older than `graceMs`
 * (temp files: older than an hour).
 */
export async function commitManifest(indexDir: string, manifest: IndexManifest, graceMs = 60_000): Promise<void> {
  await atomicWrite(join(indexDir, 'index.json'), JSON.stringify(manifest) + '\n');
  const keep = new Set<string>([
    ...[manifest.store.notes, manifest.store.chunks, manifest.store.parse_links].flat().map((s) => s.file),
    manifest.store.search_meta,
    ...Object.values(manifest.store.search),
    ...Object.values(manifest.store.search_delta ?? {}),
  ]);
  const now = Date.now();
  let names: string[] = [];
  try {
    names = await readdir(join(indexDir, 'data'));
  } catch {
    return;
  }
  await Promise.all(names.filter((n) => !keep.has(n)).map(async (n) => {
    try {
      const st = await stat(join(indexDir, 'data', n));
      // A temp file may belong to a cold build still streaming into it (src/indexer/cold.ts): an hour.
      if (now - st.mtimeMs > (n.includes('.tmp-') ? Math.max(graceMs, TEMP_GRACE_MS) : graceMs)) await rm(join(indexDir, 'data', n), { force: true });
    } catch {
      // already gone
    }
  }));
}

/** Read the stat cache; null when absent or unreadable (then every note is re-hashed). */
export async function readState(indexDir: string): Promise<StatState | null> {
  try {
    const v = JSON.parse(readFileSync(join(indexDir, 'state.json'), 'utf8')) as StatState;
    return typeof v.scan_started_ms === 'number' && v.files && typeof v.files === 'object' ? v : null;
  } catch {
    return null;
  }
}

/** Write the stat cache (atomic). Failures are reported as a finding, never thrown. */
export async function writeState(indexDir: string, state: StatState): Promise<Finding | null> {
  try {
    await atomicWrite(join(indexDir, 'state.json'), JSON.stringify(state));
    return null;
  } catch (e) {
    return { code: 'index_not_saved', severity: 'warning', message: `cannot write ${join(indexDir, 'state.json')}: ${(e as Error).message}` };
  }
}

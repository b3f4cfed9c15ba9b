/**
 * The cold build, streamed (to keep peak RSS well under the plain pipeline's; docs/INDEX.md "Cold index and worker threads"): every
 * parsed batch is consumed as it arrives (in job order, which is path order) and dropped.
 *
 * - **Record lines** go to their record shard (`shardOf(path)`) through a small per-shard buffer
 *   ({@link FLUSH_BYTES}) that is appended to a temp file in `<indexDir>/data/` when full; the content
 *   hash is computed on the way, and at the end each temp file is renamed to its content-addressed name
 *   (`<family>-NNN-<16 hex>.jsonl`, the same bytes and name `writeData` gives). Only what the manifest
 *   and the search doc table need stays in memory: per note its path, chunk count and classes.
 * - **Postings** are merged per batch into {@link ColdPostings} (varint runs in paged blocks, 2–3 bytes a
 *   posting); term shards are laid out into one reused buffer, written and released one at a time.
 *
 * Without an index directory (`persist: false`), or once a write fails, record lines are kept in memory
 * instead (the run then reports `index_not_saved`). Shards whose lines already went to a temp file
 * before a failure are marked lost: reading them re-parses the vault (same bytes ⇒ same records), as for
 * any unreadable record shard.
 */
import { createHash, type Hash } from 'node:crypto';
import { appendFileSync, rmSync } from 'node:fs';
import { rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { Finding } from '../errors.js';
import { ColdPostings, decodeShard, encodeMeta, type CompactShard, type DocNote, type LoadedMeta } from '../search/postings.js';
import type { ShardSource } from '../search/engine.js';
import type { ParsedBatch, ParsedLines } from './parse-pool.js';
import { readDataBytesSync, shardOf, writeData } from './store.js';

/** Bytes buffered per record shard before they are appended to its temp file. */
export const FLUSH_BYTES = 32 * 1024;

/** A record shard as the rest of the indexer sees it (see build.ts `ShardRef`). */
export interface ColdShardRef {
  /** Content-addressed data file, when written. */
  file: string | null;
  /** UTF-8 lines, when kept in memory. */
  data: Buffer | null;
  lines: number;
}

const FAMILIES = ['notes', 'chunks', 'parse_links'] as const;
type Family = (typeof FAMILIES)[number];
const NL = 0x0a;

/** One record shard being written. */
class ShardSink {
  lines = 0;
  private buf: Buffer | null = null;
  private used = 0;
  /** Full buffers kept in memory (memory mode). */
  private kept: Buffer[] = [];
  private hash: Hash = createHash('sha256');
  /** Temp file receiving the flushed bytes, once the first flush happened. */
  tmp: string | null = null;
  lost = false;

  constructor(private readonly name: string) {}

  /** Append one line (without its newline). Throws on a failed file write (the sink then switches mode). */
  add(line: Uint8Array, dir: string | null): void {
    if (!this.lost) {
      const need = line.length + 1;
      if (this.buf === null) this.buf = Buffer.allocUnsafeSlow(Math.max(FLUSH_BYTES, need));
      if (this.used + need > this.buf.length) {
        this.spill(dir);
        if (need > this.buf.length) this.buf = Buffer.allocUnsafeSlow(need);
      }
      this.buf.set(line, this.used);
      this.buf[this.used + line.length] = NL;
      this.used += need;
    }
    this.lines++;
  }

  /** Move the buffered bytes out: appended to the temp file (dir set) or kept in memory. */
  private spill(dir: string | null): void {
    if (this.used === 0) return;
    const bytes = this.buf!.subarray(0, this.used);
    if (dir === null) {
      this.kept.push(Buffer.from(bytes));
    } else {
      this.tmp ??= join(dir, 'data', `${this.name}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`);
      appendFileSync(this.tmp, bytes);
      this.hash.update(bytes);
    }
    this.used = 0;
  }

  /** Memory mode from now on; a shard with bytes in a temp file is lost (they are not read back). */
  toMemory(): void {
    if (this.tmp !== null) {
      this.lost = true;
      this.buf = null;
      this.used = 0;
      try {
        rmSync(this.tmp, { force: true });
      } catch {
        // best effort: an unreferenced temp file is removed by a later commit
      }
    }
  }

  /** The shard's bytes in memory (memory mode). */
  memory(): ColdShardRef {
    if (this.lost) return { file: null, data: null, lines: this.lines };
    const parts = this.kept;
    if (this.used > 0) parts.push(this.buf!.subarray(0, this.used));
    const data = Buffer.concat(parts);
    this.kept = [];
    this.buf = null;
    this.used = 0;
    return { file: null, data, lines: this.lines };
  }

  /** Write the shard under its content-addressed name. Throws on a failed write. */
  async commit(indexDir: string): Promise<ColdShardRef> {
    if (this.tmp === null) {
      const data = this.buf === null ? Buffer.alloc(0) : this.buf.subarray(0, this.used);
      const file = await writeData(indexDir, this.name, data, 'jsonl');
      this.buf = null;
      this.used = 0;
      return { file, data: null, lines: this.lines };
    }
    this.spill(indexDir);
    this.buf = null;
    const file = `${this.name}-${this.hash.digest('hex').slice(0, 16)}.jsonl`;
    await rename(this.tmp, join(indexDir, 'data', file));
    this.tmp = null;
    return { file, data: null, lines: this.lines };
  }

  /** Remove the temp file (after a failure). */
  discard(): void {
    if (this.tmp !== null) this.toMemory();
  }
}

/** What a finished cold build hands back to `indexVault`. */
export interface ColdResult {
  families: Record<Family, ColdShardRef[]>;
  /** Search meta and term shard files, when the store was written. */
  searchFiles: { meta: string; shards: Record<string, string> } | null;
  source: ShardSource;
  counts: { notes: number; chunks: number; links: number };
  /** `index_not_saved` when a write failed (null when everything was written, or nothing was to be). */
  saveFinding: Finding | null;
}

/**
 * Consumes the parsed batches of a cold build in path order (see the module doc). `indexDir` null =
 * keep everything in memory. `onFailure` turns a write error into the `index_not_saved` finding.
 */
export class ColdSink {
  private readonly shards: Record<Family, ShardSink[]>;
  private readonly postings = new ColdPostings();
  private readonly docNotes: DocNote[] = [];
  private links = 0;
  /** Doc id of the next note's first chunk (chunks are numbered in path order). */
  private nextId = 0;
  private dir: string | null;
  private saveFinding: Finding | null = null;

  constructor(
    indexDir: string | null,
    private readonly shardCount: number,
    private readonly onFailure: (e: unknown) => Finding,
  ) {
    this.dir = indexDir;
    const make = (fam: Family) => Array.from({ length: shardCount }, (_, s) => new ShardSink(`${fam}-${String(s).padStart(3, '0')}`));
    this.shards = { notes: make('notes'), chunks: make('chunks'), parse_links: make('parse_links') };
  }

  /** Take one parsed batch (the caller drops it afterwards). Never throws for a failed write. */
  add(batch: ParsedBatch): void {
    for (const r of batch.records) this.record(r);
    this.postings.add(batch.tokens);
  }

  private record(r: ParsedLines): void {
    const s = shardOf(r.path, this.shardCount);
    const lines: Record<Family, Uint8Array> = { notes: r.note, chunks: r.chunks, parse_links: r.links };
    for (const fam of FAMILIES) {
      try {
        this.shards[fam][s]!.add(lines[fam], this.dir);
      } catch (e) {
        this.fail(e);
        this.shards[fam][s]!.add(lines[fam], null);
      }
    }
    this.docNotes.push([r.path, this.nextId, r.chunk_count, r.classes]);
    this.nextId += r.chunk_count;
    this.links += r.link_count;
  }

  /** Record a failure found before the first batch (e.g. the index folder cannot be created). */
  failed(finding: Finding): void {
    this.saveFinding ??= finding;
    this.dir = null;
  }

  /** Switch to memory mode after a failed write. */
  private fail(e: unknown): void {
    if (this.dir === null) throw e;
    this.saveFinding ??= this.onFailure(e);
    this.dir = null;
    for (const fam of FAMILIES) for (const sh of this.shards[fam]) sh.toMemory();
  }

  /** Write (or keep) the record shards and the search files; the caller commits the manifest. */
  async finish(): Promise<ColdResult> {
    const p = this.postings;
    const count = p.count;
    const loaded: LoadedMeta = {
      meta: { document_count: count, next_id: count, length_sums: [...p.sums], notes: this.docNotes, shards: p.keys() },
      lengths: p.lengths(),
    };
    const counts = { notes: this.docNotes.length, chunks: count, links: this.links };
    const families = {} as Record<Family, ColdShardRef[]>;
    let searchFiles: ColdResult['searchFiles'] = null;
    const written: Record<string, string> = {};
    const inMemory = new Map<string, CompactShard>();
    const dir = this.dir;
    if (dir !== null) {
      try {
        for (const fam of FAMILIES) {
          families[fam] = [];
          for (const sh of this.shards[fam]) families[fam].push(await sh.commit(dir));
        }
        for (const key of loaded.meta.shards) {
          // Laid out straight into one reused buffer; its runs are dropped once it is written.
          written[key] = await writeData(dir, `search-${key}`, p.encode(key), 'bin');
          p.release(key);
        }
        searchFiles = { meta: await writeData(dir, 'search-meta', encodeMeta(loaded), 'bin'), shards: written };
      } catch (e) {
        this.saveFinding ??= this.onFailure(e);
        for (const fam of FAMILIES) {
          const done = families[fam] ?? [];
          families[fam] = this.shards[fam].map((sh, s) => {
            if (done[s]) return done[s]!;
            sh.discard();
            return sh.memory();
          });
        }
        // Term shards written before the failure are read back from their files; the others stay here.
        for (const key of loaded.meta.shards) if (!written[key]) inMemory.set(key, p.shard(key));
      }
    } else {
      for (const fam of FAMILIES) families[fam] = this.shards[fam].map((sh) => sh.memory());
      for (const key of loaded.meta.shards) {
        inMemory.set(key, p.shard(key));
        p.release(key);
      }
    }
    const source: ShardSource = {
      meta: () => loaded,
      load: (key) => {
        const kept = inMemory.get(key);
        if (kept) return kept;
        const file = written[key];
        if (!file || dir === null) return null;
        try {
          return decodeShard(readDataBytesSync(dir, file));
        } catch {
          return null; // the engine then rebuilds the shards from the chunks
        }
      },
    };
    return { families, searchFiles, source, counts, saveFinding: this.saveFinding };
  }
}

/**
 * The compact search index: postings in typed arrays, split into term shards, and the binary files
 * that persist them (docs/INDEX.md: compact persisted form, no giant JSON string, exact BM25 at a fraction
 * of MiniSearch's query cost).
 *
 * Vocabulary:
 * - A *document* is one chunk. Its *doc id* is a stable integer: in a cold build, the chunk's ordinal in
 *   `VaultIndex.chunks`; an incremental update gives a changed note's chunks fresh ids (`next_id` onward)
 *   and drops the old ones, so postings of untouched notes never move.
 * - Fields, in field-id order: `title` (0), `aliases` (1), `headings` (2), `text` (3) — see engine.ts.
 * - A *shard* holds every term whose first character maps to its key (`a`…`z`, `num`, `other`).
 *   Per term and field, the postings are a run of doc ids (ascending) with their term frequencies.
 *
 * Binary layout (little-endian `Uint32`s; every array starts 4-byte aligned):
 * ```
 * shard:  "LTS1" | term_count | terms_bytes | posting_count | terms (UTF-8, "\n"-joined, padded)
 *         | offsets[term_count*4 + 1] (posting index of (term, field) runs) | docs[posting_count] | tfs[posting_count]
 * meta:   "LTM1" | json_bytes | json (UTF-8, padded) | lengths[next_id*4] (field lengths per doc id)
 * ```
 * The meta JSON holds the corpus statistics BM25 needs (document count, field length sums) and the doc
 * table: per note `[path, first_id, chunk_count, classes]`, sorted by path.
 */
import { compareCodeUnits } from '../vault/scan.js';
import type { FieldTokens, NoteTokens } from './tokenize.js';

/** Number of indexed fields (title, aliases, headings, text). */
export const FIELD_COUNT = 4;

/** Shard key of a term: its first character when `a`–`z`, `num` for a digit, else `other`. */
export function shardKey(term: string): string {
  const c = term.charCodeAt(0);
  if (c >= 97 && c <= 122) return term[0]!;
  if (c >= 48 && c <= 57) return 'num';
  return 'other';
}

/** One term shard in memory. Terms sorted by code unit; runs of (term t, field f) at `offsets[t*4+f]`. */
export interface CompactShard {
  terms: string[];
  offsets: Uint32Array;
  docs: Uint32Array;
  tfs: Uint32Array;
  /** term → index in `terms` (built on first use). */
  lookup?: Map<string, number>;
}

/** One note in the doc table: its chunks are doc ids `first_id … first_id + count - 1` (chunk_index order). */
export type DocNote = [path: string, firstId: number, count: number, classes: string[]];

/** Corpus statistics and doc table (the meta file). */
export interface SearchMeta {
  /** Live documents (chunks). */
  document_count: number;
  /** One more than the highest doc id ever given out. */
  next_id: number;
  /** Sum of each field's lengths over live documents (averages are sum / document_count). */
  length_sums: number[];
  /** Notes sorted by path. */
  notes: DocNote[];
  /** Shard keys that hold at least one term (in the base shard or the delta), sorted. */
  shards: string[];
  /**
   * Doc ids whose postings are still in the persisted base or delta shards but no longer live (their note
   * changed or was removed since the last full merge); applied when a shard is loaded. Sorted; absent = none.
   */
  removed?: number[];
  /** First doc id of the delta shards (docs added since the last full merge); absent = no delta. */
  delta_from?: number;
}

/** Meta plus the per-doc field lengths (`lengths[id*4 + field]`). */
export interface LoadedMeta {
  meta: SearchMeta;
  lengths: Uint32Array;
}

/**
 * Token data of a batch of notes packed for a cheap transfer out of a worker thread: distinct terms
 * once, postings as `[term, doc (batch-local chunk ordinal), field, tf]` quadruples, and the field
 * lengths of each chunk. Note-level fields (title, aliases) are repeated for each chunk of the note,
 * as each chunk is one document.
 */
export interface PackedTokens {
  terms: string[];
  postings: Uint32Array;
  lengths: Uint32Array;
  /** Chunks per note, in batch order. */
  chunkCounts: number[];
}

/**
 * Scratch of {@link packTokens}: the postings of the batch being packed, grown by doubling and reused by
 * the next batch, so a parse worker allocates only each batch's exact result — not a JavaScript array of
 * 8-byte elements regrown as it fills and then copied (docs/PERFORMANCE.md "Round 7": a worker's garbage is
 * what its collector spends its time on).
 */
let packScratch = new Uint32Array(1 << 14);

/** Pack the token data of several notes (in order). Pure and deterministic. */
export function packTokens(notes: readonly NoteTokens[]): PackedTokens {
  const termIds = new Map<string, number>();
  const terms: string[] = [];
  let post = packScratch;
  let n = 0;
  const lens: number[] = [];
  const chunkCounts: number[] = [];
  let doc = 0;
  const addField = (field: FieldTokens, f: number, d: number) => {
    for (const term in field.tf) {
      let id = termIds.get(term);
      if (id === undefined) {
        id = terms.length;
        termIds.set(term, id);
        terms.push(term);
      }
      if (n + 4 > post.length) {
        const grown = new Uint32Array(post.length * 2);
        grown.set(post.subarray(0, n));
        packScratch = post = grown;
      }
      post[n] = id;
      post[n + 1] = d;
      post[n + 2] = f;
      post[n + 3] = field.tf[term]!;
      n += 4;
    }
  };
  for (const t of notes) {
    chunkCounts.push(t.chunks.length);
    for (const c of t.chunks) {
      addField(t.title, 0, doc);
      addField(t.aliases, 1, doc);
      addField(c.headings, 2, doc);
      addField(c.text, 3, doc);
      lens.push(t.title.len, t.aliases.len, c.headings.len, c.text.len);
      doc++;
    }
  }
  return { terms, postings: post.slice(0, n), lengths: Uint32Array.from(lens), chunkCounts };
}

/** Growable list of (doc, tf) pairs of one (term, field). */
type Run = number[];

/**
 * Collects postings (in ascending doc id order per term and field) and produces compact shards.
 * Used by cold builds (doc id = chunk ordinal) and by incremental updates (new docs only).
 */
export class PostingsBuilder {
  private readonly runs = new Map<string, (Run | undefined)[]>();
  /** Field lengths of added docs: doc id → 4 lengths. */
  readonly lengths = new Map<number, [number, number, number, number]>();

  /** Add a packed batch whose batch-local doc 0 is doc id `firstDoc`. */
  addPacked(p: PackedTokens, firstDoc: number): void {
    const runsOf: (Run | undefined)[][] = new Array(p.terms.length);
    for (let i = 0; i < p.terms.length; i++) {
      const term = p.terms[i]!;
      let r = this.runs.get(term);
      if (!r) this.runs.set(term, (r = [undefined, undefined, undefined, undefined]));
      runsOf[i] = r;
    }
    const post = p.postings;
    for (let i = 0; i < post.length; i += 4) {
      const r = runsOf[post[i]!]!;
      const f = post[i + 2]!;
      let run = r[f];
      if (!run) r[f] = run = [];
      run.push(firstDoc + post[i + 1]!, post[i + 3]!);
    }
    const n = p.lengths.length / FIELD_COUNT;
    for (let d = 0; d < n; d++) {
      const o = d * FIELD_COUNT;
      this.lengths.set(firstDoc + d, [p.lengths[o]!, p.lengths[o + 1]!, p.lengths[o + 2]!, p.lengths[o + 3]!]);
    }
  }

  /** Shard keys that received postings. */
  keys(): Set<string> {
    const out = new Set<string>();
    for (const t of this.runs.keys()) out.add(shardKey(t));
    return out;
  }

  /** Build every shard from scratch (cold build). */
  buildAll(): Map<string, CompactShard> {
    const byKey = new Map<string, string[]>();
    for (const t of this.runs.keys()) {
      const k = shardKey(t);
      const list = byKey.get(k);
      if (list) list.push(t);
      else byKey.set(k, [t]);
    }
    const out = new Map<string, CompactShard>();
    for (const key of [...byKey.keys()].sort(compareCodeUnits)) out.set(key, this.merge(null, null, byKey.get(key)!));
    return out;
  }

  /**
   * A new shard: `old` (may be null) without the postings of docs marked in `removed`, plus this
   * builder's postings for `newTerms` (terms of this shard). New doc ids must be above every old one.
   */
  merge(old: CompactShard | null, removed: Uint8Array | null, newTerms: string[]): CompactShard {
    const all = new Set<string>(old ? old.terms : []);
    for (const t of newTerms) all.add(t);
    const terms = [...all].sort(compareCodeUnits);
    const oldIndex = old ? shardLookup(old) : null;
    const offsets = new Uint32Array(terms.length * FIELD_COUNT + 1);
    let total = 0;
    if (old) total += old.docs.length;
    for (const t of newTerms) for (const run of this.runs.get(t) ?? []) if (run) total += run.length / 2;
    let docs = new Uint32Array(total);
    let tfs = new Uint32Array(total);
    let n = 0;
    const keep: string[] = [];
    for (const term of terms) {
      const ti = keep.length;
      const oi = oldIndex?.get(term);
      const runs = this.runs.get(term);
      for (let f = 0; f < FIELD_COUNT; f++) {
        offsets[ti * FIELD_COUNT + f] = n;
        if (oi !== undefined) {
          const a = old!.offsets[oi * FIELD_COUNT + f]!;
          const b = old!.offsets[oi * FIELD_COUNT + f + 1]!;
          for (let j = a; j < b; j++) {
            const d = old!.docs[j]!;
            if (removed && d < removed.length && removed[d]) continue;
            docs[n] = d;
            tfs[n++] = old!.tfs[j]!;
          }
        }
        const run = runs?.[f];
        if (run) {
          for (let j = 0; j < run.length; j += 2) {
            docs[n] = run[j]!;
            tfs[n++] = run[j + 1]!;
          }
        }
      }
      if (n === offsets[ti * FIELD_COUNT]) continue; // every posting of the term was removed
      keep.push(term);
    }
    offsets[keep.length * FIELD_COUNT] = n;
    if (n < total) {
      docs = docs.slice(0, n);
      tfs = tfs.slice(0, n);
    }
    return { terms: keep, offsets: keep.length === terms.length ? offsets : offsets.slice(0, keep.length * FIELD_COUNT + 1), docs, tfs };
  }

  /** Terms of this builder that belong to shard `key`. */
  termsOf(key: string): string[] {
    const out: string[] = [];
    for (const t of this.runs.keys()) if (shardKey(t) === key) out.push(t);
    return out;
  }
}

/** term → index of a shard (cached on the shard). */
export function shardLookup(s: CompactShard): Map<string, number> {
  if (!s.lookup) {
    const m = new Map<string, number>();
    for (let i = 0; i < s.terms.length; i++) m.set(s.terms[i]!, i);
    s.lookup = m;
  }
  return s.lookup;
}

/** True when any posting of `s` belongs to a doc marked in `removed`. */
export function shardHasAny(s: CompactShard, removed: Uint8Array): boolean {
  const docs = s.docs;
  for (let i = 0; i < docs.length; i++) {
    const d = docs[i]!;
    if (d < removed.length && removed[d]) return true;
  }
  return false;
}

const SHARD_MAGIC = 0x3153544c; // "LTS1"
const META_MAGIC = 0x314d544c; // "LTM1"
const pad4 = (n: number) => (n + 3) & ~3;

/** Serialise a shard (layout in the module doc). */
export function encodeShard(s: CompactShard): Buffer {
  const termBytes = Buffer.from(s.terms.join('\n'), 'utf8');
  const tb = pad4(termBytes.length);
  const size = 16 + tb + s.offsets.byteLength + s.docs.byteLength + s.tfs.byteLength;
  const buf = Buffer.alloc(size);
  buf.writeUInt32LE(SHARD_MAGIC, 0);
  buf.writeUInt32LE(s.terms.length, 4);
  buf.writeUInt32LE(termBytes.length, 8);
  buf.writeUInt32LE(s.docs.length, 12);
  termBytes.copy(buf, 16);
  let o = 16 + tb;
  for (const arr of [s.offsets, s.docs, s.tfs]) {
    writeU32s(buf, o, arr);
    o += arr.byteLength;
  }
  return buf;
}

/** Parse a shard; throws an Error with a reason when the bytes are not a valid shard. */
export function decodeShard(buf: Buffer): CompactShard {
  if (buf.length < 16 || buf.readUInt32LE(0) !== SHARD_MAGIC) throw new Error('not a search shard');
  const count = buf.readUInt32LE(4);
  const termLen = buf.readUInt32LE(8);
  const postings = buf.readUInt32LE(12);
  const tb = pad4(termLen);
  const want = 16 + tb + (count * FIELD_COUNT + 1 + 2 * postings) * 4;
  if (buf.length !== want) throw new Error(`search shard has ${buf.length} bytes, expected ${want}`);
  const termText = buf.toString('utf8', 16, 16 + termLen);
  const terms = count === 0 ? [] : termText.split('\n');
  if (terms.length !== count) throw new Error('search shard term count mismatch');
  let o = 16 + tb;
  const offsets = readU32s(buf, o, count * FIELD_COUNT + 1);
  o += offsets.byteLength;
  const docs = readU32s(buf, o, postings);
  o += docs.byteLength;
  const tfs = readU32s(buf, o, postings);
  return { terms, offsets, docs, tfs };
}

/** Serialise meta + lengths. */
export function encodeMeta(m: LoadedMeta): Buffer {
  const json = Buffer.from(JSON.stringify(m.meta), 'utf8');
  const jb = pad4(json.length);
  const buf = Buffer.alloc(8 + jb + m.lengths.byteLength);
  buf.writeUInt32LE(META_MAGIC, 0);
  buf.writeUInt32LE(json.length, 4);
  json.copy(buf, 8);
  writeU32s(buf, 8 + jb, m.lengths);
  return buf;
}

/** Parse meta + lengths; throws an Error with a reason when invalid. */
export function decodeMeta(buf: Buffer): LoadedMeta {
  if (buf.length < 8 || buf.readUInt32LE(0) !== META_MAGIC) throw new Error('not a search meta file');
  const jl = buf.readUInt32LE(4);
  const meta = JSON.parse(buf.toString('utf8', 8, 8 + jl)) as SearchMeta;
  const o = 8 + pad4(jl);
  const n = meta.next_id * FIELD_COUNT;
  if (buf.length !== o + n * 4) throw new Error('search meta length mismatch');
  return { meta, lengths: readU32s(buf, o, n) };
}

const LE = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function writeU32s(buf: Buffer, offset: number, arr: Uint32Array): void {
  if (LE) Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength).copy(buf, offset);
  else for (let i = 0; i < arr.length; i++) buf.writeUInt32LE(arr[i]!, offset + i * 4);
}

function readU32s(buf: Buffer, offset: number, count: number): Uint32Array {
  if (LE) {
    const start = buf.byteOffset + offset;
    if (start % 4 === 0) return new Uint32Array(buf.buffer, start, count);
    return new Uint32Array(buf.buffer.slice(start, start + count * 4));
  }
  const out = new Uint32Array(count);
  for (let i = 0; i < count; i++) out[i] = buf.readUInt32LE(offset + i * 4);
  return out;
}

/** Byte size of a {@link ColdPostings} page. */
const PAGE = 1 << 20;
/** Capacity of the i-th block of a run: 8, 16, … bytes, at most 256. */
const blockCap = (i: number) => (i >= 5 ? 256 : 8 << i);

/**
 * Cold build, streamed (to bound peak RSS; docs/PERFORMANCE.md): packed batches are added in doc order — batch i's doc 0
 * follows the last doc of batch i-1 — and the caller drops each batch once added. Postings are kept per
 * (term, field) as varint pairs (doc − previous doc of the run, tf), about 2–3 bytes a posting instead of
 * the 16 of a packed batch or the 8 of a shard, so no batch outlives its own `add`. A run's bytes sit in
 * a chain of small blocks (8 … 256 bytes) carved out of 1 MiB pages that are never reallocated: growth
 * leaves no garbage (garbage ArrayBuffers would stay resident until V8 collects them). Postings of a
 * (term, field) stay in ascending doc id order because batches and their docs arrive in order.
 *
 * {@link ColdPostings.shard} then lays one term shard out (terms in code-unit order; byte-identical to
 * the shard {@link PostingsBuilder} builds from the same notes) and {@link ColdPostings.release} drops
 * that shard's runs once written, so at most one shard exists decoded.
 */
export class ColdPostings {
  private readonly termIds = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly pages: Uint8Array[] = [];
  private pageUsed = PAGE;
  /**
   * Per run (term id × 4 + field): block addresses (page × PAGE + offset), address of the next byte and
   * end of the last block, postings, last doc id.
   */
  private readonly blocks: (number[] | undefined)[] = [];
  private readonly next: number[] = [];
  private readonly end: number[] = [];
  private readonly postings: number[] = [];
  private readonly lastDoc: number[] = [];
  private lens = new Uint32Array(1024 * FIELD_COUNT);
  private map = new Uint32Array(1024);
  private readonly pair = new Uint8Array(10);
  private byKey: Map<string, number[]> | null = null;
  private scratch = new Uint8Array(4096);
  /** Output buffer of {@link ColdPostings.encode} (own ArrayBuffer, so 4-byte aligned). */
  private out = Buffer.allocUnsafeSlow(0);
  /** Documents (chunks) added so far; the next batch's doc 0 gets this id. */
  count = 0;
  /** Sum of each field's lengths over the added documents. */
  readonly sums = [0, 0, 0, 0];

  /** Add a packed batch; its batch-local doc 0 becomes doc id {@link count}. */
  add(p: PackedTokens): void {
    if (this.byKey) throw new Error('ColdPostings.add after keys()/shard()');
    const first = this.count;
    if (this.map.length < p.terms.length) this.map = new Uint32Array(p.terms.length * 2);
    const map = this.map;
    for (let i = 0; i < p.terms.length; i++) {
      const term = p.terms[i]!;
      let id = this.termIds.get(term);
      if (id === undefined) {
        id = this.terms.length;
        this.termIds.set(term, id);
        this.terms.push(term);
        for (let f = 0; f < FIELD_COUNT; f++) {
          this.blocks.push(undefined);
          this.next.push(0);
          this.end.push(0);
          this.postings.push(0);
          this.lastDoc.push(0);
        }
      }
      map[i] = id;
    }
    const post = p.postings;
    const { next, end, lastDoc, postings, pages } = this;
    for (let i = 0; i < post.length; i += 4) {
      const k = map[post[i]!]! * FIELD_COUNT + post[i + 2]!;
      const doc = first + post[i + 1]!;
      let delta = doc - lastDoc[k]!;
      let tf = post[i + 3]!;
      let at = next[k]!;
      if (end[k]! - at >= 10) {
        // fast path: both varints fit in the run's current block
        const pi = (at / PAGE) | 0;
        const page = pages[pi]!;
        let o = at - pi * PAGE;
        const o0 = o;
        while (delta >= 0x80) {
          page[o++] = (delta & 0x7f) | 0x80;
          delta = Math.floor(delta / 128);
        }
        page[o++] = delta;
        while (tf >= 0x80) {
          page[o++] = (tf & 0x7f) | 0x80;
          tf = Math.floor(tf / 128);
        }
        page[o++] = tf;
        next[k] = at + (o - o0);
      } else {
        const n = putVarint(this.pair, putVarint(this.pair, 0, delta), tf);
        this.write(k, n);
      }
      lastDoc[k] = doc;
      postings[k]!++;
    }
    const docs = p.lengths.length / FIELD_COUNT;
    const need = (first + docs) * FIELD_COUNT;
    if (need > this.lens.length) {
      const grown = new Uint32Array(Math.max(need, this.lens.length * 2));
      grown.set(this.lens.subarray(0, first * FIELD_COUNT));
      this.lens = grown;
    }
    this.lens.set(p.lengths, first * FIELD_COUNT);
    for (let j = 0; j < p.lengths.length; j++) this.sums[j % FIELD_COUNT]! += p.lengths[j]!;
    this.count = first + docs;
  }

  /** A new block of `cap` bytes: its address. */
  private alloc(cap: number): number {
    if (this.pageUsed + cap > PAGE) {
      this.pages.push(new Uint8Array(PAGE));
      this.pageUsed = 0;
    }
    const at = (this.pages.length - 1) * PAGE + this.pageUsed;
    this.pageUsed += cap;
    return at;
  }

  /** Append the first `len` bytes of `pair` to run `k`, opening new blocks as needed. */
  private write(k: number, len: number): void {
    let list = this.blocks[k];
    if (!list) {
      const at = this.alloc(blockCap(0));
      list = this.blocks[k] = [at];
      this.next[k] = at;
      this.end[k] = at + blockCap(0);
    }
    for (let i = 0; i < len; i++) {
      if (this.next[k] === this.end[k]) {
        const cap = blockCap(list.length);
        const at = this.alloc(cap);
        list.push(at);
        this.next[k] = at;
        this.end[k] = at + cap;
      }
      const at = this.next[k]!;
      const pi = (at / PAGE) | 0;
      this.pages[pi]![at - pi * PAGE] = this.pair[i]!;
      this.next[k] = at + 1;
    }
  }

  /** Bytes used in block `b` of run `k`. */
  private blockBytes(k: number, b: number): number {
    const list = this.blocks[k]!;
    return b === list.length - 1 ? this.next[k]! - list[b]! : blockCap(b);
  }

  /** The bytes of run `k`, copied into the scratch buffer; returns their count. */
  private gather(k: number): number {
    const list = this.blocks[k];
    if (!list) return 0;
    let total = 0;
    for (let b = 0; b < list.length; b++) total += this.blockBytes(k, b);
    if (this.scratch.length < total) this.scratch = new Uint8Array(total * 2);
    let o = 0;
    for (let b = 0; b < list.length; b++) {
      const n = this.blockBytes(k, b);
      const at = list[b]!;
      const pi = (at / PAGE) | 0;
      const start = at - pi * PAGE;
      this.scratch.set(this.pages[pi]!.subarray(start, start + n), o);
      o += n;
    }
    return total;
  }

  /** Field lengths per doc id (`[id*4 + field]`), exactly {@link count} × 4 numbers. */
  lengths(): Uint32Array {
    return this.lens.slice(0, this.count * FIELD_COUNT);
  }

  private groups(): Map<string, number[]> {
    if (!this.byKey) {
      const order = this.terms.map((_, i) => i).sort((a, b) => compareCodeUnits(this.terms[a]!, this.terms[b]!));
      const byKey = new Map<string, number[]>();
      for (const id of order) {
        const k = shardKey(this.terms[id]!);
        const list = byKey.get(k);
        if (list) list.push(id);
        else byKey.set(k, [id]);
      }
      this.byKey = new Map([...byKey].sort((a, b) => compareCodeUnits(a[0], b[0])));
    }
    return this.byKey;
  }

  /** Shard keys that hold at least one term, in code-unit order (no more {@link add} after this). */
  keys(): string[] {
    return [...this.groups().keys()];
  }

  /** Postings of the terms `ids` (all fields). */
  private total(ids: readonly number[]): number {
    let total = 0;
    for (const id of ids) for (let f = 0; f < FIELD_COUNT; f++) total += this.postings[id * FIELD_COUNT + f]!;
    return total;
  }

  /** Decode the runs of `ids` into a shard's offsets, docs and tfs (arrays of the exact sizes). */
  private layout(ids: readonly number[], offsets: Uint32Array, docs: Uint32Array, tfs: Uint32Array): void {
    let pos = 0;
    ids.forEach((id, ti) => {
      for (let f = 0; f < FIELD_COUNT; f++) {
        offsets[ti * FIELD_COUNT + f] = pos;
        const end = this.gather(id * FIELD_COUNT + f);
        const bytes = this.scratch;
        let doc = 0;
        for (let j = 0; j < end;) {
          // varint pair: doc delta, tf
          let v = 0;
          let shift = 0;
          let b: number;
          do {
            b = bytes[j++]!;
            v += (b & 0x7f) * 2 ** shift;
            shift += 7;
          } while (b >= 0x80);
          doc += v;
          v = 0;
          shift = 0;
          do {
            b = bytes[j++]!;
            v += (b & 0x7f) * 2 ** shift;
            shift += 7;
          } while (b >= 0x80);
          docs[pos] = doc;
          tfs[pos++] = v;
        }
      }
    });
    offsets[ids.length * FIELD_COUNT] = pos;
  }

  /** The compact shard of `key` (its own exact-size arrays). */
  shard(key: string): CompactShard {
    const ids = this.groups().get(key) ?? [];
    const total = this.total(ids);
    const offsets = new Uint32Array(ids.length * FIELD_COUNT + 1);
    const docs = new Uint32Array(total);
    const tfs = new Uint32Array(total);
    this.layout(ids, offsets, docs, tfs);
    return { terms: ids.map((id) => this.terms[id]!), offsets, docs, tfs };
  }

  /**
   * The shard of `key` in its persisted form — the same bytes as `encodeShard(this.shard(key))` — laid out
   * in one buffer that the next call reuses (the result is valid until then): writing every shard leaves
   * no garbage behind.
   */
  encode(key: string): Buffer {
    if (!LE) return encodeShard(this.shard(key));
    const ids = this.groups().get(key) ?? [];
    const total = this.total(ids);
    const termBytes = Buffer.from(ids.map((id) => this.terms[id]!).join('\n'), 'utf8');
    const tb = pad4(termBytes.length);
    const nOff = ids.length * FIELD_COUNT + 1;
    const size = 16 + tb + (nOff + 2 * total) * 4;
    if (this.out.length < size) this.out = Buffer.allocUnsafeSlow(size + (size >> 2));
    const buf = this.out;
    buf.writeUInt32LE(SHARD_MAGIC, 0);
    buf.writeUInt32LE(ids.length, 4);
    buf.writeUInt32LE(termBytes.length, 8);
    buf.writeUInt32LE(total, 12);
    termBytes.copy(buf, 16);
    buf.fill(0, 16 + termBytes.length, 16 + tb);
    const words = new Uint32Array(buf.buffer, buf.byteOffset + 16 + tb, nOff + 2 * total);
    this.layout(ids, words.subarray(0, nOff), words.subarray(nOff, nOff + total), words.subarray(nOff + total));
    return buf.subarray(0, size);
  }

  /** Drop the runs of shard `key` (after it has been built and written); pages go with the object. */
  release(key: string): void {
    for (const id of this.groups().get(key) ?? []) {
      for (let f = 0; f < FIELD_COUNT; f++) {
        const k = id * FIELD_COUNT + f;
        this.blocks[k] = undefined;
        this.next[k] = 0;
        this.end[k] = 0;
        this.postings[k] = 0;
      }
    }
  }
}

/** Write `v` (0 ≤ v < 2^32) as an unsigned LEB128 varint at `at`; returns the next position. */
function putVarint(buf: Uint8Array, at: number, v: number): number {
  while (v >= 0x80) {
    buf[at++] = (v & 0x7f) | 0x80;
    v = Math.floor(v / 128);
  }
  buf[at++] = v;
  return at;
}

/**
 * One shard from a persisted base shard and a delta shard (postings of docs added since the last full
 * merge, all with higher doc ids), without the postings of docs marked in `removed`. The result holds
 * exactly the postings a full merge would have written, so scores do not depend on whether the index
 * was compacted (docs/INDEX.md "Incremental indexing").
 */
export function combineShards(base: CompactShard | null, removed: Uint8Array | null, delta: CompactShard | null): CompactShard {
  const parts = [base, delta].filter((x): x is CompactShard => x !== null);
  const all = new Set<string>();
  for (const p of parts) for (const t of p.terms) all.add(t);
  const terms = [...all].sort(compareCodeUnits);
  const lookups = parts.map((p) => shardLookup(p));
  let total = 0;
  for (const p of parts) total += p.docs.length;
  const docs = new Uint32Array(total);
  const tfs = new Uint32Array(total);
  const offsets = new Uint32Array(terms.length * FIELD_COUNT + 1);
  const keep: string[] = [];
  let n = 0;
  for (const term of terms) {
    const ti = keep.length;
    for (let f = 0; f < FIELD_COUNT; f++) {
      offsets[ti * FIELD_COUNT + f] = n;
      parts.forEach((p, pi) => {
        const i = lookups[pi]!.get(term);
        if (i === undefined) return;
        for (let j = p.offsets[i * FIELD_COUNT + f]!; j < p.offsets[i * FIELD_COUNT + f + 1]!; j++) {
          const d = p.docs[j]!;
          if (removed && d < removed.length && removed[d]) continue;
          docs[n] = d;
          tfs[n++] = p.tfs[j]!;
        }
      });
    }
    if (n === offsets[ti * FIELD_COUNT]) continue;
    keep.push(term);
  }
  offsets[keep.length * FIELD_COUNT] = n;
  return { terms: keep, offsets: offsets.slice(0, keep.length * FIELD_COUNT + 1), docs: docs.slice(0, n), tfs: tfs.slice(0, n) };
}

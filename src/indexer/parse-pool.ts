/**
 * Parsing many notes: `parseNote` plus search token data, in worker threads when it pays off.
 *
 * Rule (docs/INDEX.md "Cold index and worker threads"): a pool of `availableParallelism()` workers
 * (at most 4) is used when more than {@link WORKER_THRESHOLD} notes need parsing AND the compiled worker
 * file `parse-worker.js` exists next to this module (that is, when loretrace runs from `dist/`). Running
 * from TypeScript sources (vitest, tsx) or for small batches, notes are parsed in the calling thread.
 * Both paths run the same pure function ({@link parseBatch}), so results are byte-identical.
 *
 * Work is sent in batches (up to {@link BATCH_NOTES} notes or {@link BATCH_BYTES} bytes), the bytes of a
 * batch in one transferred ArrayBuffer (no copy), two batches in flight per worker so no worker waits.
 * A batch comes back as JSON lines (the store's record lines, serialised once, in the worker) and the
 * batch's search postings packed into typed arrays — no per-note message, no second serialisation.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { VaultConfig, VaultPath } from '../types.js';
import { parseNote } from '../notes/parse.js';
import { packTokens, type PackedTokens } from '../search/postings.js';
import { noteTokens, type NoteTokens } from '../search/tokenize.js';

/** Notes to parse above which worker threads are used (when available). */
export const WORKER_THRESHOLD = 200;
/** Most notes in one worker batch. */
export const BATCH_NOTES = 64;
/** Most bytes in one worker batch (a bigger single note forms its own batch). */
export const BATCH_BYTES = 1 << 20;

/**
 * What parse produces for one note, as the store's JSON lines in UTF-8 (each `JSON.stringify` of a plain
 * object, no trailing newline): `note` = `{ path, sha256, note, findings }`, `chunks` = `{ path, chunks }`,
 * `links` = `{ path, links }` (links with resolution pending, external or tag). The byte arrays are views
 * into one buffer per batch and family (transferred from the worker, never copied).
 */
export interface ParsedLines {
  path: VaultPath;
  sha256: string;
  note: Uint8Array;
  chunks: Uint8Array;
  links: Uint8Array;
  /** `note.classes` (the search doc table filters on it). */
  classes: string[];
  chunk_count: number;
  link_count: number;
}

/** A parsed batch: its notes' lines, in job order, and their packed search postings. */
export interface ParsedBatch {
  records: ParsedLines[];
  tokens: PackedTokens;
}

/** A batch as it crosses the thread boundary: one UTF-8 buffer per family plus line ends. */
export interface WireBatch {
  paths: string[];
  shas: string[];
  classes: string[][];
  chunkCounts: number[];
  linkCounts: number[];
  buffers: { note: ArrayBuffer; chunks: ArrayBuffer; links: ArrayBuffer };
  ends: { note: number[]; chunks: number[]; links: number[] };
  tokens: PackedTokens;
}

const FAMILIES = ['note', 'chunks', 'links'] as const;

/** Pack parsed lines for the transfer (one buffer per family). */
export function toWire(b: { paths: string[]; shas: string[]; classes: string[][]; chunkCounts: number[]; linkCounts: number[]; lines: Record<(typeof FAMILIES)[number], string[]>; tokens: PackedTokens }): WireBatch {
  const buffers = {} as WireBatch['buffers'];
  const ends = {} as WireBatch['ends'];
  for (const fam of FAMILIES) {
    const parts = b.lines[fam].map((l) => Buffer.from(l, 'utf8'));
    const total = parts.reduce((s, x) => s + x.length, 0);
    const ab = new ArrayBuffer(total);
    const view = new Uint8Array(ab);
    const e: number[] = [];
    let o = 0;
    for (const x of parts) {
      view.set(x, o);
      o += x.length;
      e.push(o);
    }
    buffers[fam] = ab;
    ends[fam] = e;
  }
  return { paths: b.paths, shas: b.shas, classes: b.classes, chunkCounts: b.chunkCounts, linkCounts: b.linkCounts, buffers, ends, tokens: b.tokens };
}

/** Unpack a {@link WireBatch} into per-note views. */
export function fromWire(w: WireBatch): ParsedBatch {
  const views = FAMILIES.map((fam) => {
    const all = new Uint8Array(w.buffers[fam]);
    let start = 0;
    return w.ends[fam].map((end) => {
      const v = all.subarray(start, end);
      start = end;
      return v;
    });
  });
  return {
    records: w.paths.map((path, i) => ({
      path, sha256: w.shas[i]!, note: views[0]![i]!, chunks: views[1]![i]!, links: views[2]![i]!,
      classes: w.classes[i]!, chunk_count: w.chunkCounts[i]!, link_count: w.linkCounts[i]!,
    })),
    tokens: w.tokens,
  };
}

/** Transferable buffers of a wire batch. */
export function transferList(w: WireBatch): ArrayBuffer[] {
  return [w.buffers.note, w.buffers.chunks, w.buffers.links, w.tokens.postings.buffer as ArrayBuffer, w.tokens.lengths.buffer as ArrayBuffer];
}

/** One parse job. */
export interface ParseJob {
  path: VaultPath;
  sha256: string;
  bytes: Uint8Array;
}

/** Parse jobs in order into a {@link WireBatch}; pure and deterministic (runs in the worker too). */
export function parseWire(jobs: readonly ParseJob[], config: VaultConfig): WireBatch {
  const lines = { note: [] as string[], chunks: [] as string[], links: [] as string[] };
  const tokens: NoteTokens[] = [];
  const classes: string[][] = [];
  const chunkCounts: number[] = [];
  const linkCounts: number[] = [];
  for (const job of jobs) {
    const parsed = parseNote(job.path, job.bytes, { config, sha256: job.sha256 });
    lines.note.push(JSON.stringify({ path: job.path, sha256: job.sha256, note: parsed.note, findings: parsed.findings }));
    lines.chunks.push(JSON.stringify({ path: job.path, chunks: parsed.chunks }));
    lines.links.push(JSON.stringify({ path: job.path, links: parsed.links }));
    classes.push(parsed.note.classes);
    chunkCounts.push(parsed.chunks.length);
    linkCounts.push(parsed.links.length);
    tokens.push(noteTokens(parsed.note, parsed.chunks));
  }
  return toWire({ paths: jobs.map((j) => j.path), shas: jobs.map((j) => j.sha256), classes, chunkCounts, linkCounts, lines, tokens: packTokens(tokens) });
}

/** Parse jobs in order (in the calling thread). */
export function parseBatch(jobs: readonly ParseJob[], config: VaultConfig): ParsedBatch {
  return fromWire(parseWire(jobs, config));
}

/** Message to a worker: a batch's paths, hashes and bytes (one transferred buffer, `ends[i]` = end of note i). */
export interface BatchMessage {
  id: number;
  paths: string[];
  shas: string[];
  ends: number[];
  buffer: ArrayBuffer;
}

/** Split a batch message back into jobs (views into the transferred buffer). */
export function jobsOf(msg: BatchMessage): ParseJob[] {
  const bytes = new Uint8Array(msg.buffer);
  let start = 0;
  return msg.paths.map((path, i) => {
    const end = msg.ends[i]!;
    const job = { path, sha256: msg.shas[i]!, bytes: bytes.subarray(start, end) };
    start = end;
    return job;
  });
}

function workerFile(): string | null {
  if (!import.meta.url.endsWith('.js')) return null;
  const file = fileURLToPath(new URL('./parse-worker.js', import.meta.url));
  return existsSync(file) ? file : null;
}

/** Options of {@link parseAll}. */
export interface ParseAllOptions {
  config: VaultConfig;
  /** `auto` (default): the rule above; `false`: never; `true`: whenever the worker file exists. */
  workers?: boolean | 'auto';
  /** Called after each parsed batch with (notes done, total). */
  onProgress?: (done: number, total: number) => void;
}

function batchesOf(jobs: readonly ParseJob[]): ParseJob[][] {
  const out: ParseJob[][] = [];
  let cur: ParseJob[] = [];
  let bytes = 0;
  for (const j of jobs) {
    if (cur.length > 0 && (cur.length >= BATCH_NOTES || bytes + j.bytes.byteLength > BATCH_BYTES)) {
      out.push(cur);
      cur = [];
      bytes = 0;
    }
    cur.push(j);
    bytes += j.bytes.byteLength;
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

/**
 * Parse jobs; batches come back in job order. Reports which path was taken in `threads` (0 = in-thread).
 * Batching never changes results: each note is parsed alone, postings are merged in job order.
 */
export async function parseAll(jobs: readonly ParseJob[], options: ParseAllOptions): Promise<{ batches: ParsedBatch[]; threads: number }> {
  const file = options.workers === false ? null : workerFile();
  const useWorkers = file !== null && (options.workers === true || jobs.length > WORKER_THRESHOLD);
  const batches = batchesOf(jobs);
  const total = jobs.length;
  const out = new Array<ParsedBatch>(batches.length);
  let done = 0;
  if (!useWorkers) {
    for (let i = 0; i < batches.length; i++) {
      const b = batches[i]!;
      batches[i] = []; // release the bytes as soon as they are parsed
      out[i] = parseBatch(b, options.config);
      done += b.length;
      options.onProgress?.(done, total);
    }
    return { batches: out, threads: 0 };
  }
  const threads = Math.max(1, Math.min(4, availableParallelism(), batches.length));
  let next = 0;
  const sizes = batches.map((b) => b.length);
  const message = (i: number): [BatchMessage, ArrayBuffer[]] => {
    const b = batches[i]!;
    const total = b.reduce((s, j) => s + j.bytes.byteLength, 0);
    const buf = new Uint8Array(total);
    const ends: number[] = [];
    let o = 0;
    for (const j of b) {
      buf.set(j.bytes, o);
      o += j.bytes.byteLength;
      ends.push(o);
    }
    const msg: BatchMessage = { id: i, paths: b.map((j) => j.path), shas: b.map((j) => j.sha256), ends, buffer: buf.buffer };
    sizes[i] = b.length;
    batches[i] = []; // the bytes now live in the transferred buffer only
    return [msg, [buf.buffer]];
  };
  await Promise.all(Array.from({ length: threads }, () => new Promise<void>((resolve, reject) => {
    const worker = new Worker(file!, { workerData: { config: options.config } });
    let inFlight = 0;
    let failed = false;
    const feed = () => {
      while (inFlight < 2 && next < batches.length) {
        const [msg, transfer] = message(next++);
        inFlight++;
        worker.postMessage(msg, transfer);
      }
      if (inFlight === 0) void worker.terminate().then(() => resolve());
    };
    worker.on('message', (msg: { id: number; batch?: WireBatch; error?: string; path?: string }) => {
      if (failed) return;
      if (msg.error !== undefined) {
        failed = true;
        void worker.terminate();
        reject(new Error(`parse worker failed on a batch of ${sizes[msg.id]} notes: ${msg.error}`));
        return;
      }
      out[msg.id] = fromWire(msg.batch!);
      inFlight--;
      done += sizes[msg.id]!;
      options.onProgress?.(done, total);
      feed();
    });
    worker.on('error', (e) => {
      failed = true;
      reject(e);
    });
    feed();
  })));
  return { batches: out, threads };
}
